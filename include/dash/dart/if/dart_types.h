/* DASH's include path for this DART header; it is <dart/dart_types.h> here. */
#ifndef DART_DASH_DART_IF_DART_TYPES_H_
#define DART_DASH_DART_IF_DART_TYPES_H_

#include <dart/dart_types.h>

#endif /* DART_DASH_DART_IF_DART_TYPES_H_ */
