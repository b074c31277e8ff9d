/* DASH's include path for this DART header; it is <dart/dart_locality.h> here.
 */
#ifndef DART_DASH_DART_IF_DART_LOCALITY_H_
#define DART_DASH_DART_IF_DART_LOCALITY_H_

#include <dart/dart_locality.h>

#endif /* DART_DASH_DART_IF_DART_LOCALITY_H_ */
