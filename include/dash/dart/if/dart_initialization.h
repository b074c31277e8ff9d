/* DASH's include path for this DART header; it is <dart/dart_initialization.h>
 * here. */
#ifndef DART_DASH_DART_IF_DART_INITIALIZATION_H_
#define DART_DASH_DART_IF_DART_INITIALIZATION_H_

#include <dart/dart_initialization.h>

#endif /* DART_DASH_DART_IF_DART_INITIALIZATION_H_ */
