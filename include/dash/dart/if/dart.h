/* DASH's include path for the DART interface: programs written against
 * DASH's DART include <dash/dart/if/dart.h>; it is <dart/dart.h> here. */
#ifndef DART_DASH_DART_IF_DART_H_
#define DART_DASH_DART_IF_DART_H_

#include <dart/dart.h>

#endif /* DART_DASH_DART_IF_DART_H_ */
