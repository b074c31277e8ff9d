/* DART: runtime settings. */
#ifndef DART_DART_CONFIG_H_
#define DART_DART_CONFIG_H_

#include <dart/dart_types.h>
#include <dart/dart_util.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *config_out points to DART's settings (static storage; callable before
 * dart_init). log_enabled: DART_LOG=1 in the environment. */
void dart_config(dart_config_t **config_out);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_CONFIG_H_ */
