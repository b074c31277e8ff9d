/* DASH's include path for this DART header; it is <dart/dart_team_group.h>
 * here. */
#ifndef DART_DASH_DART_IF_DART_TEAM_GROUP_H_
#define DART_DASH_DART_IF_DART_TEAM_GROUP_H_

#include <dart/dart_team_group.h>

#endif /* DART_DASH_DART_IF_DART_TEAM_GROUP_H_ */
