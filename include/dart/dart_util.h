/* DART: attribute macros of DART's interface. */
#ifndef DART_DART_UTIL_H_
#define DART_DART_UTIL_H_

#ifdef __cplusplus
#define DART_NOTHROW __attribute__((nothrow))
#else
#define DART_NOTHROW
#endif
#define DART_MAYBE_UNUSED __attribute__((unused))
#define DART_INLINE static inline DART_MAYBE_UNUSED

#endif /* DART_DART_UTIL_H_ */
