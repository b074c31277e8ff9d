/* DASH's include path for this DART header; it is <dart/dart_synchronization.h>
 * here. */
#ifndef DART_DASH_DART_IF_DART_SYNCHRONIZATION_H_
#define DART_DASH_DART_IF_DART_SYNCHRONIZATION_H_

#include <dart/dart_synchronization.h>

#endif /* DART_DASH_DART_IF_DART_SYNCHRONIZATION_H_ */
