/* DASH's include path for this DART header; it is <dart/dart_config.h> here. */
#ifndef DART_DASH_DART_IF_DART_CONFIG_H_
#define DART_DASH_DART_IF_DART_CONFIG_H_

#include <dart/dart_config.h>

#endif /* DART_DASH_DART_IF_DART_CONFIG_H_ */
