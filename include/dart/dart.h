/* DART, the DASH runtime interface, on rmashim: include this one header.
 * Build and link: see README.md ("DART"). */
#ifndef DART_DART_H_
#define DART_DART_H_

#include <dart/dart_communication.h>
#include <dart/dart_config.h>
#include <dart/dart_globmem.h>
#include <dart/dart_initialization.h>
#include <dart/dart_locality.h>
#include <dart/dart_synchronization.h>
#include <dart/dart_team_group.h>
#include <dart/dart_types.h>
#include <dart/dart_util.h>

#endif /* DART_DART_H_ */
