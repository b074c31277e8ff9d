// The sequential model of a generated program (model.h), and the buffers
// the executor and the model share.
#include "tests/fuzz/model.h"

#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace rma_fuzz {
namespace {

template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// target = target op origin for one arithmetic value of type T (MPI-3.1
// 5.9.2's definitions; integers wrap).
template <typename T>
void Arith(MPI_Op op, const std::byte* origin, std::byte* target) {
  const T a = Load<T>(target), b = Load<T>(origin);
  T r = a;
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (op == MPI_SUM)
      r = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if (op == MPI_PROD)
      r = static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    if (op == MPI_BAND) r = static_cast<T>(a & b);
    if (op == MPI_BOR) r = static_cast<T>(a | b);
    if (op == MPI_BXOR) r = static_cast<T>(a ^ b);
    if (op == MPI_LAND) r = (a != 0) && (b != 0);
    if (op == MPI_LOR) r = (a != 0) || (b != 0);
    if (op == MPI_LXOR) r = (a != 0) != (b != 0);
  } else {
    if (op == MPI_SUM) r = a + b;
    if (op == MPI_PROD) r = a * b;
  }
  if (op == MPI_MAX) r = std::max(a, b);
  if (op == MPI_MIN) r = std::min(a, b);
  Store(target, r);
}

// The integer types by width, signed or not.
template <typename Fn>
void WithInteger(int bytes, bool is_signed, Fn fn) {
  switch (bytes) {
    case 1:
      is_signed ? fn(int8_t{}) : fn(uint8_t{});
      break;
    case 2:
      is_signed ? fn(int16_t{}) : fn(uint16_t{});
      break;
    case 4:
      is_signed ? fn(int32_t{}) : fn(uint32_t{});
      break;
    default:
      is_signed ? fn(int64_t{}) : fn(uint64_t{});
      break;
  }
}

// MPI_MINLOC / MPI_MAXLOC on a (value, int) pair whose int sits at
// `index_at`: the smaller (larger) value, and on a tie the smaller index.
template <typename V>
void Loc(MPI_Op op, const std::byte* origin, std::byte* target, int index_at) {
  const V a = Load<V>(target), b = Load<V>(origin);
  const int ia = Load<int>(target + index_at),
            ib = Load<int>(origin + index_at);
  V v = a;
  int i = ia;
  const bool origin_wins = op == MPI_MINLOC ? b < a : b > a;
  if (origin_wins) {
    v = b;
    i = ib;
  } else if (!(a < b) && !(b < a)) {
    i = std::min(ia, ib);
  }
  Store(target, v);
  Store(target + index_at, i);
}

template <typename C>
void Complex(MPI_Op op, const std::byte* origin, std::byte* target) {
  using R = typename C::value_type;
  const R ar = Load<R>(target), ai = Load<R>(target + sizeof(R));
  const R br = Load<R>(origin), bi = Load<R>(origin + sizeof(R));
  R rr = ar, ri = ai;
  if (op == MPI_SUM) {
    rr = ar + br;
    ri = ai + bi;
  } else if (op == MPI_PROD) {
    rr = ar * br - ai * bi;
    ri = ar * bi + ai * br;
  }
  Store(target, rr);
  Store(target + sizeof(R), ri);
}

// long double values occupy 10 bytes of their 16.
void LongDouble(MPI_Op op, const std::byte* origin, std::byte* target) {
  long double a = 0, b = 0;
  std::memcpy(&a, target, 10);
  std::memcpy(&b, origin, 10);
  long double r = a;
  if (op == MPI_SUM) r = a + b;
  if (op == MPI_PROD) r = a * b;
  if (op == MPI_MAX) r = std::max(a, b);
  if (op == MPI_MIN) r = std::min(a, b);
  std::memcpy(target, &r, 10);
}

void LongDoubleLoc(MPI_Op op, const std::byte* origin, std::byte* target) {
  long double a = 0, b = 0;
  std::memcpy(&a, target, 10);
  std::memcpy(&b, origin, 10);
  const int ia = Load<int>(target + 16), ib = Load<int>(origin + 16);
  const bool origin_wins = op == MPI_MINLOC ? b < a : b > a;
  if (origin_wins) {
    std::memcpy(target, &b, 10);
    Store(target + 16, ib);
  } else if (!(a < b) && !(b < a)) {
    Store(target + 16, std::min(ia, ib));
  }
}

// One element: target = target op origin (MPI_REPLACE: origin).
void ApplyElement(const ElemType& e, MPI_Op op, const std::byte* origin,
                  std::byte* target) {
  if (op == MPI_NO_OP) return;
  if (op == MPI_REPLACE) {
    std::memcpy(target, origin, static_cast<size_t>(e.extent));
    return;
  }
  switch (e.repr) {
    case Repr::kInt:
    case Repr::kUint:
      WithInteger(e.extent, e.repr == Repr::kInt,
                  [&](auto t) { Arith<decltype(t)>(op, origin, target); });
      break;
    case Repr::kFloat:
      Arith<float>(op, origin, target);
      break;
    case Repr::kDouble:
      Arith<double>(op, origin, target);
      break;
    case Repr::kLongDouble:
      LongDouble(op, origin, target);
      break;
    case Repr::kBool:
    case Repr::kByte:
      Arith<uint8_t>(op, origin, target);
      break;
    case Repr::kLogical:
      Arith<int32_t>(op, origin, target);
      break;
    case Repr::kComplexF:
      Complex<std::complex<float>>(op, origin, target);
      break;
    case Repr::kComplexD:
      Complex<std::complex<double>>(op, origin, target);
      break;
    case Repr::kPairFloat:
      Loc<float>(op, origin, target, 4);
      break;
    case Repr::kPairDouble:
      Loc<double>(op, origin, target, 8);
      break;
    case Repr::kPairLong:
      Loc<long>(op, origin, target, 8);
      break;
    case Repr::kPairInt:
      Loc<int>(op, origin, target, 4);
      break;
    case Repr::kPairShort:
      Loc<short>(op, origin, target, 4);
      break;
    case Repr::kPairLongDouble:
      LongDoubleLoc(op, origin, target);
      break;
  }
}

// Whether two elements hold the same value (compare-and-swap).
bool SameValue(const ElemType& e, const std::byte* a, const std::byte* b) {
  std::byte x[32], y[32];
  std::memcpy(x, a, static_cast<size_t>(e.extent));
  std::memcpy(y, b, static_cast<size_t>(e.extent));
  MaskPadding(e, x);
  MaskPadding(e, y);
  return std::memcmp(x, y, static_cast<size_t>(e.extent)) == 0;
}

bool FetchesInResult(OpKind k) {
  return k == OpKind::kGacc || k == OpKind::kRgacc || k == OpKind::kFop ||
         k == OpKind::kCas;
}

// Runs one operation of world rank `origin_world` against the model's
// memory of window `w`; fills `b` as the executor's buffers would be.
class Machine {
 public:
  Machine(const Program& prog, const Filter& filter, ModelOutcome* out)
      : prog_(prog), filter_(filter), out_(out) {}

  void Run() {
    out_->memory.resize(prog_.windows.size());
    for (size_t w = 0; w < prog_.windows.size(); ++w) {
      const WindowSpec& spec = prog_.windows[w];
      out_->memory[w].resize(prog_.layout.size);
      for (int r = 0; r < prog_.layout.size; ++r) {
        out_->memory[w][r].assign(static_cast<size_t>(spec.bytes[r]),
                                  std::byte{0});
        InitMemory(prog_, static_cast<int>(w), r, out_->memory[w][r].data());
      }
    }
    out_->ops_run.assign(prog_.layout.size, 0);
    for (const Phase& p : prog_.phases) {
      if (filter_.Keeps(p)) RunPhase(p);
    }
    for (auto& [key, values] : out_->multisets) {
      std::sort(values.begin(), values.end());
    }
    MaskRegions();
  }

 private:
  void RunPhase(const Phase& p) {
    const WindowSpec& spec = prog_.windows[p.window];
    int units = 1;
    for (const auto& group : p.plans) {
      for (const RankPlan& plan : group) {
        for (const Op& op : plan.ops) units = std::max(units, op.unit + 1);
      }
    }
    for (size_t g = 0; g < p.plans.size(); ++g) {
      for (size_t r = 0; r < p.plans[g].size(); ++r) {
        out_->fetched[p.index][spec.groups[g][r]].resize(
            p.plans[g][r].ops.size());
      }
    }
    for (int unit = 0; unit < units; ++unit) {
      for (size_t g = 0; g < p.plans.size(); ++g) {
        for (size_t r = 0; r < p.plans[g].size(); ++r) {
          const RankPlan& plan = p.plans[g][r];
          for (const Action& a : plan.actions) {
            if (a.act != Act::kOp) continue;
            const Op& op = plan.ops[a.op];
            if (op.unit != unit || !filter_.Keeps(op)) continue;
            RunOp(p, spec, static_cast<int>(g), spec.groups[g][r], op, a.op);
          }
        }
      }
    }
  }

  void RunOp(const Phase& p, const WindowSpec& spec, int g, int origin_world,
             const Op& op, int index) {
    ++out_->ops_run[origin_world];
    OpBuffers b = MakeOpBuffers(op);
    if (op.target != MPI_PROC_NULL) {
      const int tw = spec.groups[g][op.target];
      std::byte* target =
          out_->memory[p.window][tw].data() + op.disp * spec.disp_unit[tw];
      Apply(op, b, target);
    }
    const Buffer* fetched = FetchedBuffer(op, b);
    if (fetched == nullptr) return;
    if (op.record == Record::kMultiset) {
      const int tw = spec.groups[g][op.target];
      out_->multisets[MultisetKey(p, op, tw)].push_back(
          Hex(Digestible(*fetched, op.elem, false)));
      return;
    }
    out_->fetched[p.index][origin_world][index] = Recorded(op, *fetched);
  }

  // What the operation does to the target and its own buffers.
  static void Apply(const Op& op, OpBuffers& b, std::byte* target) {
    const ElemType& e = Elem(op.elem);
    const long x = e.extent;
    if (op.kind == OpKind::kRmw) {
      AddDelta(e, target, op.delta);  // the counter's element
      return;
    }
    const std::vector<long> tslots =
        Footprint(*op.target_buf.type, op.target_buf.count);
    auto at = [&](size_t i) { return target + tslots[i] * x; };
    auto in = [&](const Buffer& buf, size_t i) {
      return const_cast<std::byte*>(buf.storage.data()) + buf.slots[i] * x;
    };
    switch (op.kind) {
      case OpKind::kPut:
      case OpKind::kRput:
        for (size_t i = 0; i < tslots.size(); ++i) {
          std::memcpy(at(i), in(b.origin, i), static_cast<size_t>(x));
        }
        break;
      case OpKind::kGet:
      case OpKind::kRget:
        for (size_t i = 0; i < tslots.size(); ++i) {
          std::memcpy(in(b.origin, i), at(i), static_cast<size_t>(x));
        }
        break;
      case OpKind::kAcc:
      case OpKind::kRacc:
        for (size_t i = 0; i < tslots.size(); ++i) {
          ApplyElement(e, op.op, in(b.origin, i), at(i));
        }
        break;
      case OpKind::kGacc:
      case OpKind::kRgacc:
      case OpKind::kFop:
        for (size_t i = 0; i < tslots.size(); ++i) {
          std::memcpy(in(b.result, i), at(i), static_cast<size_t>(x));
          if (!op.null_origin) ApplyElement(e, op.op, in(b.origin, i), at(i));
        }
        break;
      case OpKind::kCas:
        std::memcpy(in(b.result, 0), at(0), static_cast<size_t>(x));
        if (SameValue(e, at(0), in(b.compare, 0))) {
          std::memcpy(at(0), in(b.origin, 0), static_cast<size_t>(x));
        }
        break;
      case OpKind::kRmw:
        break;
    }
  }

  void MaskRegions() {
    for (size_t w = 0; w < prog_.windows.size(); ++w) {
      const WindowSpec& spec = prog_.windows[w];
      for (int r = 0; r < prog_.layout.size; ++r) {
        std::byte* mem = out_->memory[w][r].data();
        for (int i = 0; i < spec.regions_on[r]; ++i) {
          const Region& reg = spec.regions[i];
          const ElemType& e = Elem(reg.elem);
          for (int k = 0; k < reg.count; ++k) {
            MaskPadding(e, mem + reg.offset + k * e.extent);
          }
        }
      }
    }
  }

  const Program& prog_;
  const Filter& filter_;
  ModelOutcome* out_;
};

}  // namespace

Buffer MakeBuffer(const TypedBuf& b, int elem, uint64_t seed, Values values) {
  Buffer buf;
  const long x = Elem(elem).extent;
  std::vector<long> fp = Footprint(*b.type, b.count);
  long lo = 0, hi = 0;
  if (!fp.empty()) {
    lo = *std::min_element(fp.begin(), fp.end());
    hi = *std::max_element(fp.begin(), fp.end());
  }
  buf.storage.resize((hi - lo + 1) * x);
  Rng rng(seed);
  for (long s = 0; s <= hi - lo; ++s) {
    MakeValue(Elem(elem), values, rng, buf.storage.data() + s * x);
  }
  buf.ptr = buf.storage.data() - lo * x;
  for (long s : fp) buf.slots.push_back(s - lo);
  return buf;
}

std::vector<std::byte> Digestible(const Buffer& b, int elem, bool holes_only) {
  const ElemType& e = Elem(elem);
  std::vector<std::byte> v = b.storage;
  for (size_t at = 0; at + e.extent <= v.size(); at += e.extent) {
    MaskPadding(e, v.data() + at);
  }
  if (holes_only) {
    for (long s : b.slots) std::memset(v.data() + s * e.extent, 0, e.extent);
  }
  return v;
}

void InitMemory(const Program& prog, int w, int world_rank, std::byte* base) {
  const WindowSpec& spec = prog.windows[w];
  if (spec.bytes[world_rank] == 0) return;  // base may be null: no memset
  std::memset(base, 0xee, spec.bytes[world_rank]);
  for (int r = 0; r < spec.regions_on[world_rank]; ++r) {
    const Region& reg = spec.regions[r];
    const ElemType& e = Elem(reg.elem);
    Rng rng(Mix(prog.seed, 0x77696e + w, world_rank * 64 + r));
    for (int i = 0; i < reg.count; ++i) {
      MakeValue(e, Values::kAny, rng, base + reg.offset + i * e.extent);
    }
  }
}

OpBuffers MakeOpBuffers(const Op& op) {
  OpBuffers b;
  if (op.kind == OpKind::kRmw) return b;
  b.origin = MakeBuffer(op.origin, op.elem, op.value_seed, op.values);
  b.result = MakeBuffer(op.kind == OpKind::kGacc || op.kind == OpKind::kRgacc
                            ? op.result
                            : op.target_buf,
                        op.elem, Mix(op.value_seed, 1), Values::kAny);
  if (op.kind == OpKind::kCas) {
    b.compare =
        MakeBuffer(op.target_buf, op.elem, Mix(op.value_seed, 2), Values::kAny);
  }
  return b;
}

const Buffer* FetchedBuffer(const Op& op, const OpBuffers& b) {
  if (FetchesInResult(op.kind)) return &b.result;
  if (op.kind == OpKind::kGet || op.kind == OpKind::kRget) return &b.origin;
  return nullptr;
}

std::vector<std::byte> Recorded(const Op& op, const Buffer& fetched) {
  return Digestible(fetched, op.elem, op.record == Record::kNone);
}

std::string MultisetKey(const Phase& p, const Op& op, int target_world) {
  char key[96];
  std::snprintf(key, sizeof key, "M p%05d u%d t%03d r%02d s%05ld", p.index,
                op.unit, target_world, op.region, op.base_slot);
  return key;
}

ModelOutcome RunModel(const Program& prog, const Filter& filter) {
  ModelOutcome out;
  Machine(prog, filter, &out).Run();
  return out;
}

std::string Hex(const std::vector<std::byte>& v) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  s.reserve(v.size() * 2);
  for (std::byte b : v) {
    s += kDigits[static_cast<unsigned>(b) >> 4];
    s += kDigits[static_cast<unsigned>(b) & 15];
  }
  return s;
}

}  // namespace rma_fuzz
