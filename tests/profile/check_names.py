"""The profile of profile_names.c: strict JSON (UTF-8, no NaN or Infinity),
schema-checked, with the window's name escaped as the shim promises: quote,
backslash and control bytes escaped, every byte that does not start a
well-formed UTF-8 sequence replaced by U+FFFD, valid sequences kept.
  check_names.py PROFILE_JSON STDERR RANKS CHECK_AS"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
# The profile's schema module (tools/rmashim_profile.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "..", "tools"))
import rmashim_profile  # noqa: E402

# profile_names.c's kName, and what the JSON must decode it to.
NAME_BYTES = (b'q"b\\c\x01\x1f|\xff|\xc3(|\xe2\x82|\xed\xa0\x80|\xf4\x90\x80\x80|'
              b'\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\x7f')
EXPECTED = ('q"b\\c\x01\x1f|\ufffd|\ufffd(|\ufffd\ufffd|\ufffd\ufffd\ufffd|'
            '\ufffd\ufffd\ufffd\ufffd|\u00e9\u20ac\U0001F600|\x7f')


def main():
    doc = rmashim_profile.load(sys.argv[1])  # strict, schema-checked
    names = [w["name"] for w in doc["windows"]]
    assert names == [EXPECTED], (names, EXPECTED)
    # Python's own lenient decoding agrees on the well-formed part.
    assert NAME_BYTES.decode("utf-8", "replace").endswith("\u00e9\u20ac\U0001F600|\x7f")
    print("profile names ok")


if __name__ == "__main__":
    main()
