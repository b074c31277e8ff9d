/* DASH's include path for this DART header; it is <dart/dart_communication.h>
 * here. */
#ifndef DART_DASH_DART_IF_DART_COMMUNICATION_H_
#define DART_DASH_DART_IF_DART_COMMUNICATION_H_

#include <dart/dart_communication.h>

#endif /* DART_DASH_DART_IF_DART_COMMUNICATION_H_ */
