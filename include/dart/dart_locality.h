/* DART: where units run, as a tree of locality domains built from hwloc:
 * GLOBAL > NODE > MODULE > NUMA > CORE (types in dart_types.h). */
#ifndef DART_DART_LOCALITY_H_
#define DART_DART_LOCALITY_H_

#include <dart/dart_types.h>
#include <dart/dart_util.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over `team`: builds the team's locality tree (dart_init does
 * it for DART_TEAM_ALL, dart_team_create for every new team; calling it
 * again rebuilds it). */
dart_ret_t dart_team_locality_init(dart_team_t team);
/* Frees the team's locality tree (not collective). */
dart_ret_t dart_team_locality_finalize(dart_team_t team);

/* The domain `domain_tag` ("." for the root) of the team's tree; owned by
 * DART, valid until the team's locality is finalized. */
dart_ret_t dart_domain_team_locality(dart_team_t team, const char *domain_tag,
                                     dart_domain_locality_t **team_domain_out);

/* Domains created, cloned or split by the caller belong to the caller:
 * free them with dart_domain_destroy. */
dart_ret_t dart_domain_create(dart_domain_locality_t **domain_out);
/* A deep copy of a (sub)tree. */
dart_ret_t dart_domain_clone(const dart_domain_locality_t *domain_in,
                             dart_domain_locality_t **domain_out);
/* Frees the domain's subtree and the domain object itself. */
dart_ret_t dart_domain_destroy(dart_domain_locality_t *domain);
/* Makes `domain_lhs` a deep copy of `domain_rhs` (keeping its parent). */
dart_ret_t dart_domain_assign(dart_domain_locality_t *domain_lhs,
                              const dart_domain_locality_t *domain_rhs);
/* The subdomain tagged `domain_tag` below or at `domain_in`;
 * DART_ERR_NOTFOUND (and NULL) if there is none. */
dart_ret_t dart_domain_find(const dart_domain_locality_t *domain_in,
                            const char *domain_tag,
                            dart_domain_locality_t **subdomain_out);
/* Keeps only the subdomains on the paths to the tagged domains (and the
 * subtrees below them); unit lists and counts are updated. */
dart_ret_t dart_domain_select(dart_domain_locality_t *domain_in,
                              int num_subdomain_tags,
                              const char **subdomain_tags);
/* Removes the tagged subdomains; unit lists and counts are updated. */
dart_ret_t dart_domain_exclude(dart_domain_locality_t *domain_in,
                               int num_subdomain_tags,
                               const char **subdomain_tags);
/* Makes `subdomain` (now owned by `domain`) child number
 * `subdomain_rel_id` (-1: last) of `domain`. */
dart_ret_t dart_domain_add_subdomain(dart_domain_locality_t *domain,
                                     dart_domain_locality_t *subdomain,
                                     int subdomain_rel_id);
/* Moves `domain` out of its parent into `new_parent_domain`. */
dart_ret_t dart_domain_move_subdomain(dart_domain_locality_t *domain,
                                      dart_domain_locality_t *new_parent_domain,
                                      int new_domain_rel_id);
/* Splits the domains of `scope` below `domain_in` into `num_parts` parts of
 * consecutive domains with balanced unit counts: split_domain_out[p]
 * (an array of num_parts domains the caller provides; free each part's
 * contents with dart_domain_destroy's semantics via the returned children)
 * becomes a copy of `domain_in` restricted to part p. */
dart_ret_t dart_domain_split_scope(const dart_domain_locality_t *domain_in,
                                   dart_locality_scope_t scope, int num_parts,
                                   dart_domain_locality_t *split_domain_out);
/* Tags of all domains of `scope` below `domain_in`; *domain_tags_out and
 * each tag are malloc'd (the caller frees them). */
dart_ret_t dart_domain_scope_tags(const dart_domain_locality_t *domain_in,
                                  dart_locality_scope_t scope,
                                  int *num_domains_out,
                                  char ***domain_tags_out);
/* The domains of `scope` below `domain_in` (DART_ERR_NOTFOUND if none);
 * *domains_out is malloc'd, the domains stay in the tree. */
dart_ret_t dart_domain_scope_domains(const dart_domain_locality_t *domain_in,
                                     dart_locality_scope_t scope,
                                     int *num_domains_out,
                                     dart_domain_locality_t ***domains_out);
/* Groups the tagged subdomains (which must share a parent) under a new
 * domain of scope DART_LOCALITY_SCOPE_GROUP inserted into that parent;
 * its tag is written to group_domain_tag_out
 * (DART_LOCALITY_DOMAIN_TAG_MAX_SIZE bytes). */
dart_ret_t dart_domain_group(dart_domain_locality_t *domain_in,
                             int num_group_subdomains,
                             const char **group_subdomain_tags,
                             char *group_domain_tag_out);

/* Locality of team unit `unit`; *loc points into DART's storage, valid
 * until the team is destroyed. */
dart_ret_t dart_unit_locality(dart_team_t team, dart_team_unit_t unit,
                              dart_unit_locality_t **loc);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_LOCALITY_H_ */
