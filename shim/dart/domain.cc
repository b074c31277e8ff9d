// Locality domain trees and the dart_domain_* operations on them. None is
// collective; they work on whatever tree they are given (a team's, owned by
// DART, or a copy owned by the caller).
#include "shim/dart/domain.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace rmashim::dart {
namespace {

template <typename T>
T* Alloc(size_t n) {
  // T is a pointer for arrays of pointers: sizeof(T) is meant.
  return static_cast<T*>(std::malloc(
      sizeof(T) * (n > 0 ? n : 1)));  // NOLINT(bugprone-sizeof-expression)
}

bool TagIn(const char* tag, int n, const char** tags) {
  for (int i = 0; i < n; ++i) {
    if (tags[i] != nullptr && std::strcmp(tag, tags[i]) == 0) return true;
  }
  return false;
}

// Whether any of the tags names `d` or a domain below it.
bool ContainsAny(const dart_domain_locality_t* d, int n, const char** tags) {
  for (int i = 0; i < n; ++i) {
    if (tags[i] != nullptr && FindDomain(d, tags[i]) != nullptr) return true;
  }
  return false;
}

void RemoveChild(dart_domain_locality_t* parent, int index, bool destroy) {
  if (destroy) DestroyDomain(parent->children[index]);
  for (int i = index + 1; i < parent->num_domains; ++i) {
    parent->children[i - 1] = parent->children[i];
  }
  if (--parent->num_domains == 0) {
    std::free(parent->children);
    parent->children = nullptr;
  }
}

// keep == true: select (keep the tagged domains, their subtrees and the
// paths to them); keep == false: exclude (drop the tagged domains).
void Filter(dart_domain_locality_t* d, int n, const char** tags, bool keep) {
  for (int i = 0; i < d->num_domains;) {
    dart_domain_locality_t* c = d->children[i];
    const bool tagged = TagIn(c->domain_tag, n, tags);
    bool drop;
    if (keep) {
      drop = !tagged && !ContainsAny(c, n, tags);
      if (!drop && !tagged) Filter(c, n, tags, keep);
    } else {
      drop = tagged;
      if (!drop) Filter(c, n, tags, keep);
    }
    if (drop) {
      RemoveChild(d, i, /*destroy=*/true);
    } else {
      ++i;
    }
  }
}

// Recounts `d` and its ancestors after a change below `d`.
void UpdateUpwards(dart_domain_locality_t* d) {
  UpdateUnits(d);
  for (dart_domain_locality_t* p = d->parent; p != nullptr; p = p->parent) {
    // Only the counts of the ancestors change, not their subtrees.
    dart_domain_locality_t* saved = p->parent;
    UpdateUnits(p);
    p->parent = saved;
  }
}

int LastTagSuffix(const dart_domain_locality_t* d) {
  int last = -1;
  for (int i = 0; i < d->num_domains; ++i) {
    const char* dot = std::strrchr(d->children[i]->domain_tag, '.');
    if (dot != nullptr && dot[1] != '\0')
      last = std::max(last, std::atoi(dot + 1));
  }
  return last;
}

}  // namespace

void InitDomain(dart_domain_locality_t* d) {
  std::memset(d, 0, sizeof(*d));
  d->scope = DART_LOCALITY_SCOPE_UNDEFINED;
  d->team = DART_TEAM_NULL;
  d->node_id = -1;
  d->shared_mem_bytes = -1;
  d->is_symmetric = 1;
}

dart_domain_locality_t* NewDomain() {
  auto* d = Alloc<dart_domain_locality_t>(1);
  InitDomain(d);
  return d;
}

void AppendChild(dart_domain_locality_t* parent,
                 dart_domain_locality_t* child) {
  auto* children = static_cast<dart_domain_locality_t**>(std::realloc(
      parent->children,
      sizeof(dart_domain_locality_t*) * (parent->num_domains + 1)));
  children[parent->num_domains++] = child;
  parent->children = children;
  child->parent = parent;
}

void ClearDomain(dart_domain_locality_t* d) {
  for (int i = 0; i < d->num_domains; ++i) DestroyDomain(d->children[i]);
  std::free(d->children);
  std::free(d->unit_ids);
  std::free(d->aliases);
  d->children = nullptr;
  d->unit_ids = nullptr;
  d->aliases = nullptr;
  d->num_domains = d->num_units = d->num_aliases = 0;
}

void DestroyDomain(dart_domain_locality_t* d) {
  if (d == nullptr) return;
  ClearDomain(d);
  std::free(d);
}

void CopyDomain(dart_domain_locality_t* dst, const dart_domain_locality_t* src,
                dart_domain_locality_t* parent) {
  *dst = *src;
  dst->parent = parent;
  dst->aliases = nullptr;
  dst->num_aliases = 0;
  dst->unit_ids = nullptr;
  if (src->num_units > 0) {
    dst->unit_ids = Alloc<dart_global_unit_t>(src->num_units);
    std::memcpy(dst->unit_ids, src->unit_ids,
                sizeof(dart_global_unit_t) * src->num_units);
  }
  dst->children = nullptr;
  if (src->num_domains > 0) {
    dst->children = Alloc<dart_domain_locality_t*>(src->num_domains);
    for (int i = 0; i < src->num_domains; ++i) {
      dst->children[i] = Alloc<dart_domain_locality_t>(1);
      CopyDomain(dst->children[i], src->children[i], dst);
    }
  }
}

void UpdateUnits(dart_domain_locality_t* d) {
  if (d->scope == DART_LOCALITY_SCOPE_CORE && d->num_domains == 0) return;
  std::vector<dart_unit_t> units;
  int cores = 0, nodes = 0;
  for (int i = 0; i < d->num_domains; ++i) {
    dart_domain_locality_t* c = d->children[i];
    c->parent = d;
    c->relative_index = i;
    UpdateUnits(c);
    for (int u = 0; u < c->num_units; ++u) units.push_back(c->unit_ids[u].id);
    cores += c->num_cores;
    nodes += c->num_nodes;
  }
  std::sort(units.begin(), units.end());
  units.erase(std::unique(units.begin(), units.end()), units.end());
  std::free(d->unit_ids);
  d->unit_ids = nullptr;
  d->num_units = static_cast<int>(units.size());
  if (!units.empty()) {
    d->unit_ids = Alloc<dart_global_unit_t>(units.size());
    for (size_t i = 0; i < units.size(); ++i) d->unit_ids[i].id = units[i];
  }
  if (d->scope == DART_LOCALITY_SCOPE_GLOBAL ||
      d->scope == DART_LOCALITY_SCOPE_GROUP) {
    d->num_nodes = nodes;
  } else {
    d->num_nodes = 1;
  }
  // Node, module and NUMA domains keep the hardware's core counts.
  if (d->scope == DART_LOCALITY_SCOPE_GLOBAL ||
      d->scope == DART_LOCALITY_SCOPE_GROUP || d->num_cores <= 0) {
    d->num_cores = cores;
  }
}

dart_domain_locality_t* FindDomain(const dart_domain_locality_t* d,
                                   const char* tag) {
  if (std::strcmp(d->domain_tag, tag) == 0) {
    return const_cast<dart_domain_locality_t*>(d);
  }
  for (int i = 0; i < d->num_domains; ++i) {
    if (dart_domain_locality_t* f = FindDomain(d->children[i], tag)) return f;
  }
  return nullptr;
}

void CollectScope(const dart_domain_locality_t* d, dart_locality_scope_t scope,
                  std::vector<dart_domain_locality_t*>* out) {
  if (d->scope == scope) {
    out->push_back(const_cast<dart_domain_locality_t*>(d));
    return;
  }
  for (int i = 0; i < d->num_domains; ++i) {
    CollectScope(d->children[i], scope, out);
  }
}

std::vector<std::vector<dart_domain_locality_t*>> BalancedParts(
    const std::vector<dart_domain_locality_t*>& domains, size_t parts) {
  std::vector<std::vector<dart_domain_locality_t*>> out(parts);
  if (parts == 0) return out;
  long total = 0;
  for (const auto* d : domains) total += d->num_units;
  const size_t n = domains.size();
  size_t i = 0;
  long sum = 0;
  for (size_t p = 0; p < parts && i < n; ++p) {
    const long target =
        (total * static_cast<long>(p + 1) + static_cast<long>(parts) / 2) /
        static_cast<long>(parts);
    do {
      out[p].push_back(domains[i]);
      sum += domains[i]->num_units;
      ++i;
    } while (i < n &&
             (p + 1 == parts || (n - i > parts - 1 - p &&
                                 sum + domains[i]->num_units <= target)));
  }
  return out;
}

}  // namespace rmashim::dart

using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_domain_create(dart_domain_locality_t** domain_out) {
  if (domain_out == nullptr) return DART_ERR_INVAL;
  *domain_out = NewDomain();
  return DART_OK;
}

dart_ret_t dart_domain_clone(const dart_domain_locality_t* domain_in,
                             dart_domain_locality_t** domain_out) {
  if (domain_in == nullptr || domain_out == nullptr) return DART_ERR_INVAL;
  dart_domain_locality_t* d =
      static_cast<dart_domain_locality_t*>(std::malloc(sizeof(*d)));
  CopyDomain(d, domain_in, domain_in->parent);
  *domain_out = d;
  return DART_OK;
}

dart_ret_t dart_domain_destroy(dart_domain_locality_t* domain) {
  if (domain == nullptr) return DART_ERR_INVAL;
  DestroyDomain(domain);
  return DART_OK;
}

dart_ret_t dart_domain_assign(dart_domain_locality_t* domain_lhs,
                              const dart_domain_locality_t* domain_rhs) {
  if (domain_lhs == nullptr || domain_rhs == nullptr) return DART_ERR_INVAL;
  if (domain_lhs == domain_rhs) return DART_OK;
  ClearDomain(domain_lhs);
  CopyDomain(domain_lhs, domain_rhs, domain_rhs->parent);
  return DART_OK;
}

dart_ret_t dart_domain_find(const dart_domain_locality_t* domain_in,
                            const char* domain_tag,
                            dart_domain_locality_t** subdomain_out) {
  if (subdomain_out == nullptr) return DART_ERR_INVAL;
  *subdomain_out = nullptr;
  if (domain_in == nullptr || domain_tag == nullptr) return DART_ERR_INVAL;
  *subdomain_out = FindDomain(domain_in, domain_tag);
  return *subdomain_out != nullptr ? DART_OK : DART_ERR_NOTFOUND;
}

dart_ret_t dart_domain_select(dart_domain_locality_t* domain_in,
                              int num_subdomain_tags,
                              const char** subdomain_tags) {
  if (domain_in == nullptr || num_subdomain_tags < 0 ||
      (num_subdomain_tags > 0 && subdomain_tags == nullptr)) {
    return DART_ERR_INVAL;
  }
  if (TagIn(domain_in->domain_tag, num_subdomain_tags, subdomain_tags)) {
    return DART_OK;  // the whole domain is selected
  }
  Filter(domain_in, num_subdomain_tags, subdomain_tags, /*keep=*/true);
  UpdateUpwards(domain_in);
  return DART_OK;
}

dart_ret_t dart_domain_exclude(dart_domain_locality_t* domain_in,
                               int num_subdomain_tags,
                               const char** subdomain_tags) {
  if (domain_in == nullptr || num_subdomain_tags < 0 ||
      (num_subdomain_tags > 0 && subdomain_tags == nullptr)) {
    return DART_ERR_INVAL;
  }
  Filter(domain_in, num_subdomain_tags, subdomain_tags, /*keep=*/false);
  UpdateUpwards(domain_in);
  return DART_OK;
}

dart_ret_t dart_domain_add_subdomain(dart_domain_locality_t* domain,
                                     dart_domain_locality_t* subdomain,
                                     int subdomain_rel_id) {
  if (domain == nullptr || subdomain == nullptr ||
      subdomain_rel_id > domain->num_domains) {
    return DART_ERR_INVAL;
  }
  AppendChild(domain, subdomain);
  if (subdomain_rel_id >= 0) {
    // Move the new last child to its place.
    for (int i = domain->num_domains - 1; i > subdomain_rel_id; --i) {
      std::swap(domain->children[i], domain->children[i - 1]);
    }
  }
  UpdateUpwards(domain);
  return DART_OK;
}

dart_ret_t dart_domain_move_subdomain(dart_domain_locality_t* domain,
                                      dart_domain_locality_t* new_parent_domain,
                                      int new_domain_rel_id) {
  if (domain == nullptr || new_parent_domain == nullptr) return DART_ERR_INVAL;
  dart_domain_locality_t* old_parent = domain->parent;
  if (old_parent != nullptr) {
    for (int i = 0; i < old_parent->num_domains; ++i) {
      if (old_parent->children[i] == domain) {
        RemoveChild(old_parent, i, /*destroy=*/false);
        break;
      }
    }
    UpdateUpwards(old_parent);
  }
  return dart_domain_add_subdomain(new_parent_domain, domain,
                                   new_domain_rel_id);
}

dart_ret_t dart_domain_split_scope(const dart_domain_locality_t* domain_in,
                                   dart_locality_scope_t scope, int num_parts,
                                   dart_domain_locality_t* split_domain_out) {
  if (domain_in == nullptr || num_parts < 1 || split_domain_out == nullptr) {
    return DART_ERR_INVAL;
  }
  std::vector<dart_domain_locality_t*> domains;
  CollectScope(domain_in, scope, &domains);
  if (domains.empty()) return DART_ERR_NOTFOUND;
  const auto parts = BalancedParts(domains, static_cast<size_t>(num_parts));
  for (int p = 0; p < num_parts; ++p) {
    std::vector<const char*> tags;
    for (const auto* d : parts[p]) tags.push_back(d->domain_tag);
    dart_domain_locality_t* out = &split_domain_out[p];
    CopyDomain(out, domain_in, domain_in->parent);
    // The tags point into domain_in, which the filter does not touch.
    if (!TagIn(out->domain_tag, static_cast<int>(tags.size()), tags.data())) {
      Filter(out, static_cast<int>(tags.size()), tags.data(), /*keep=*/true);
    }
    UpdateUnits(out);
  }
  return DART_OK;
}

dart_ret_t dart_domain_scope_domains(const dart_domain_locality_t* domain_in,
                                     dart_locality_scope_t scope,
                                     int* num_domains_out,
                                     dart_domain_locality_t*** domains_out) {
  if (domain_in == nullptr || num_domains_out == nullptr ||
      domains_out == nullptr) {
    return DART_ERR_INVAL;
  }
  *num_domains_out = 0;
  *domains_out = nullptr;
  std::vector<dart_domain_locality_t*> domains;
  CollectScope(domain_in, scope, &domains);
  if (domains.empty()) return DART_ERR_NOTFOUND;
  *domains_out = Alloc<dart_domain_locality_t*>(domains.size());
  std::copy(domains.begin(), domains.end(), *domains_out);
  *num_domains_out = static_cast<int>(domains.size());
  return DART_OK;
}

dart_ret_t dart_domain_scope_tags(const dart_domain_locality_t* domain_in,
                                  dart_locality_scope_t scope,
                                  int* num_domains_out,
                                  char*** domain_tags_out) {
  if (domain_in == nullptr || num_domains_out == nullptr ||
      domain_tags_out == nullptr) {
    return DART_ERR_INVAL;
  }
  *num_domains_out = 0;
  *domain_tags_out = nullptr;
  std::vector<dart_domain_locality_t*> domains;
  CollectScope(domain_in, scope, &domains);
  if (domains.empty()) return DART_ERR_NOTFOUND;
  char** tags = Alloc<char*>(domains.size());
  for (size_t i = 0; i < domains.size(); ++i) {
    tags[i] = strdup(domains[i]->domain_tag);
  }
  *domain_tags_out = tags;
  *num_domains_out = static_cast<int>(domains.size());
  return DART_OK;
}

dart_ret_t dart_domain_group(dart_domain_locality_t* domain_in,
                             int num_group_subdomains,
                             const char** group_subdomain_tags,
                             char* group_domain_tag_out) {
  if (domain_in == nullptr || num_group_subdomains < 1 ||
      group_subdomain_tags == nullptr || group_domain_tag_out == nullptr) {
    return DART_ERR_INVAL;
  }
  group_domain_tag_out[0] = '\0';
  const int n = num_group_subdomains;
  const char** tags = group_subdomain_tags;
  // The lowest common ancestor of the grouped domains.
  std::vector<dart_domain_locality_t*> path;  // root ... first domain
  for (int i = 0; i < n; ++i) {
    dart_domain_locality_t* d = FindDomain(domain_in, tags[i]);
    if (d == nullptr) return DART_ERR_NOTFOUND;
    std::vector<dart_domain_locality_t*> mine;
    for (dart_domain_locality_t* a = d; a != nullptr; a = a->parent) {
      mine.insert(mine.begin(), a);
      if (a == domain_in) break;
    }
    if (i == 0) {
      path = mine;
    } else {
      size_t common = 0;
      while (common < path.size() && common < mine.size() &&
             path[common] == mine[common]) {
        ++common;
      }
      path.resize(common);
    }
  }
  if (path.empty()) return DART_ERR_INVAL;
  dart_domain_locality_t* parent = path.back();
  if (TagIn(parent->domain_tag, n, tags)) {
    if (parent == domain_in || parent->parent == nullptr) return DART_ERR_INVAL;
    parent = parent->parent;
  }
  dart_domain_locality_t* group = NewDomain();
  group->scope = DART_LOCALITY_SCOPE_GROUP;
  group->level = parent->level + 1;
  group->team = parent->team;
  group->node_id = parent->node_id;
  std::memcpy(group->host, parent->host, sizeof(group->host));
  const int suffix = LastTagSuffix(parent) + 1;
  if (std::strcmp(parent->domain_tag, ".") == 0) {
    std::snprintf(group->domain_tag, sizeof(group->domain_tag), ".%d", suffix);
  } else {
    std::snprintf(group->domain_tag, sizeof(group->domain_tag), "%s.%d",
                  parent->domain_tag, suffix);
  }
  // Grouped children move into the group; a child holding grouped domains
  // deeper down lends the group a copy restricted to them and loses them.
  for (int i = 0; i < parent->num_domains;) {
    dart_domain_locality_t* c = parent->children[i];
    if (TagIn(c->domain_tag, n, tags)) {
      RemoveChild(parent, i, /*destroy=*/false);
      AppendChild(group, c);
      continue;
    }
    if (ContainsAny(c, n, tags)) {
      dart_domain_locality_t* copy =
          static_cast<dart_domain_locality_t*>(std::malloc(sizeof(*copy)));
      CopyDomain(copy, c, group);
      Filter(copy, n, tags, /*keep=*/true);
      AppendChild(group, copy);
      Filter(c, n, tags, /*keep=*/false);
    }
    ++i;
  }
  AppendChild(parent, group);
  UpdateUpwards(parent);
  std::snprintf(group_domain_tag_out, DART_LOCALITY_DOMAIN_TAG_MAX_SIZE, "%s",
                group->domain_tag);
  return DART_OK;
}

}  // extern "C"
