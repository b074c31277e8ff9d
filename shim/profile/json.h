// JSON text the profile writes: profile.cc's window records and
// traffic.cc's job-wide views share these, so the document's numbers and
// strings are written one way.
#ifndef RMASHIM_SHIM_PROFILE_JSON_H_
#define RMASHIM_SHIM_PROFILE_JSON_H_

#include <cstdio>

namespace rmashim {

// `v`, or null where it is not finite (JSON has no infinity or NaN).
void JsonNumber(FILE* f, double v);
// `s` as a JSON string: escaped, invalid UTF-8 bytes as U+FFFD.
void JsonString(FILE* f, const char* s);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_PROFILE_JSON_H_
