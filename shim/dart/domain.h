// Locality domain trees (dart_domain_locality_t): plain C structs, every
// node and array from malloc, so a tree built here can be freed by
// dart_domain_destroy and copied by value like DART-MPI's.
#ifndef RMASHIM_SHIM_DART_DOMAIN_H_
#define RMASHIM_SHIM_DART_DOMAIN_H_

#include <dart/dart.h>

#include <cstddef>
#include <vector>

namespace rmashim::dart {

// A zeroed domain (scope undefined, no team, node -1).
dart_domain_locality_t* NewDomain();
void InitDomain(dart_domain_locality_t* d);
// Takes ownership of `child`, which becomes the last child of `parent`.
void AppendChild(dart_domain_locality_t* parent, dart_domain_locality_t* child);
// Frees the subtree below `d` and its arrays, not `d` itself.
void ClearDomain(dart_domain_locality_t* d);
// ClearDomain and free(d).
void DestroyDomain(dart_domain_locality_t* d);
// Deep copy of `src` into the (cleared or uninitialized) `dst`.
void CopyDomain(dart_domain_locality_t* dst, const dart_domain_locality_t* src,
                dart_domain_locality_t* parent);
// Recomputes units, core and node counts, relative indices and parent links
// bottom-up below and at `d` (core domains keep their units).
void UpdateUnits(dart_domain_locality_t* d);
// Depth-first search by tag, `d` included; null if absent.
dart_domain_locality_t* FindDomain(const dart_domain_locality_t* d,
                                   const char* tag);
// The domains of `scope` below or at `d`, depth-first.
void CollectScope(const dart_domain_locality_t* d, dart_locality_scope_t scope,
                  std::vector<dart_domain_locality_t*>* out);
// `parts` runs of consecutive domains with balanced unit counts (each part
// non-empty when parts <= domains.size()).
std::vector<std::vector<dart_domain_locality_t*>> BalancedParts(
    const std::vector<dart_domain_locality_t*>& domains, size_t parts);

}  // namespace rmashim::dart

#endif  // RMASHIM_SHIM_DART_DOMAIN_H_
