// JSON text the profile writes (profile.cc, traffic.cc): numbers JSON can
// hold and strings any JSON parser reads, whatever bytes a window name has.
#include "shim/profile/json.h"

#include <cmath>

namespace rmashim {

// A number as JSON has it: JSON has no infinity or NaN, so a non-finite
// value (a broken clock; never expected) is written as null, which the
// schema check then reports.
void JsonNumber(FILE* f, double v) {
  if (std::isfinite(v)) {
    std::fprintf(f, "%.9g", v);
  } else {
    std::fputs("null", f);
  }
}

namespace {

// The length of the well-formed UTF-8 sequence at `s` (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0.
int Utf8Length(const unsigned char* s) {
  auto cont = [&](int i, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return s[i] >= lo && s[i] <= hi;
  };
  const unsigned c = s[0];
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c >= 0xE1 && c <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

}  // namespace

// `s` (a window name, any bytes MPI_Win_set_name was given) as a JSON
// string: quotes and backslashes escaped, control bytes as \u00XX, and
// each byte that does not start a well-formed UTF-8 sequence as U+FFFD,
// so any JSON parser reads the document.
void JsonString(FILE* f, const char* s) {
  std::fputc('"', f);
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  while (*p != 0) {
    const int n = Utf8Length(p);
    if (n == 0) {
      std::fputs("\\ufffd", f);
      ++p;
    } else if (*p == '"' || *p == '\\') {
      std::fputc('\\', f);
      std::fputc(*p++, f);
    } else if (*p < 0x20) {
      std::fprintf(f, "\\u%04x", *p++);
    } else {
      std::fwrite(p, 1, n, f);
      p += n;
    }
  }
  std::fputc('"', f);
}

}  // namespace rmashim
