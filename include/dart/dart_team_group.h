/* DART: groups (local sets of units, always sorted by global unit id) and
 * teams (collectively formed from groups, like MPI communicators). */
#ifndef DART_DART_TEAM_GROUP_H_
#define DART_DART_TEAM_GROUP_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An opaque group object; create with dart_group_create, free with
 * dart_group_destroy. Members are global unit ids in ascending order. */
typedef struct dart_group_struct *dart_group_t;
#define DART_GROUP_NULL ((dart_group_t)NULL)

dart_ret_t dart_group_create(dart_group_t *group);
dart_ret_t dart_group_destroy(dart_group_t *group);
dart_ret_t dart_group_clone(const dart_group_t gin, dart_group_t *gout);
dart_ret_t dart_group_union(const dart_group_t g1, const dart_group_t g2,
                            dart_group_t *gout);
dart_ret_t dart_group_intersect(const dart_group_t g1, const dart_group_t g2,
                                dart_group_t *gout);
/* Adding a member twice or deleting a non-member changes nothing. */
dart_ret_t dart_group_addmember(dart_group_t g, dart_global_unit_t unitid);
dart_ret_t dart_group_delmember(dart_group_t g, dart_global_unit_t unitid);
dart_ret_t dart_group_ismember(const dart_group_t g, dart_global_unit_t unitid,
                               int32_t *ismember);
dart_ret_t dart_group_size(const dart_group_t g, size_t *size);
/* `unitids` must hold dart_group_size() entries; ascending order. */
dart_ret_t dart_group_getmembers(const dart_group_t g,
                                 dart_global_unit_t *unitids);
/* Splits `g` into min(n, size) groups of consecutive members whose sizes
 * differ by at most one; gout must hold n entries, *nout get allocated. */
dart_ret_t dart_group_split(const dart_group_t g, size_t n, size_t *nout,
                            dart_group_t *gout);
/* Splits `g` by locality: the domains of `scope` in `domain` (a team's
 * locality tree) are cut into min(n, count) parts of consecutive domains
 * with balanced unit counts; gout[i] gets the members of `g` in part i.
 * *nout is the number of parts (gout[*nout..n) become DART_GROUP_NULL). */
dart_ret_t dart_group_locality_split(const dart_group_t g,
                                     dart_domain_locality_t *domain,
                                     dart_locality_scope_t scope, size_t n,
                                     size_t *nout, dart_group_t *gout);

/* Collective over `teamid`: the units of `group` (a subset of the team)
 * form a new team, ranked by ascending global id. Members get its id in
 * *newteam, the others DART_TEAM_NULL (they may pass a NULL group). The id
 * is the same on all members and differs from every other team they are
 * in. */
dart_ret_t dart_team_create(dart_team_t teamid, const dart_group_t group,
                            dart_team_t *newteam);
/* Collective over the team: frees its segments and locks, then the team;
 * sets *teamid to DART_TEAM_NULL. DART_TEAM_ALL cannot be destroyed. */
dart_ret_t dart_team_destroy(dart_team_t *teamid);
/* Collective: a new team with the same units. */
dart_ret_t dart_team_clone(dart_team_t team, dart_team_t *newteam);
/* A new group holding the team's units (global ids). */
dart_ret_t dart_team_get_group(dart_team_t teamid, dart_group_t *group);
dart_ret_t dart_team_myid(dart_team_t teamid, dart_team_unit_t *myid);
dart_ret_t dart_team_size(dart_team_t teamid, size_t *size);
/* This unit's id and the number of units in DART_TEAM_ALL. */
dart_ret_t dart_myid(dart_global_unit_t *myid);
dart_ret_t dart_size(size_t *size);
/* Team-relative <-> global unit ids (not collective). g2l gives
 * DART_UNDEFINED_UNIT_ID for a unit that is not in the team. */
dart_ret_t dart_team_unit_l2g(dart_team_t team, dart_team_unit_t localid,
                              dart_global_unit_t *globalid);
dart_ret_t dart_team_unit_g2l(dart_team_t team, dart_global_unit_t globalid,
                              dart_team_unit_t *localid);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_TEAM_GROUP_H_ */
