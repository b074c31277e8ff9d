/* DASH's include path for this DART header; it is <dart/dart_util.h> here. */
#ifndef DART_DASH_DART_IF_DART_UTIL_H_
#define DART_DASH_DART_IF_DART_UTIL_H_

#include <dart/dart_util.h>

#endif /* DART_DASH_DART_IF_DART_UTIL_H_ */
