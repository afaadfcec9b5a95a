#include "weights/torch_pickle.hpp"

#include <map>
#include <memory>
#include <set>

#include "core/error.hpp"
#include "weights/torch_conversion.hpp"

namespace emb {

namespace {

enum class Kind { none, boolean, integer, string, tuple, list, dict, global, storage, tensor };

// With its article, for messages: "holds an int under key 'step'".
const char* kind_name(Kind k) {
  constexpr const char* kNames[] = {"None",   "a bool",  "an int",    "a str",     "a tuple",
                                    "a list", "a dict",  "a class",   "a storage", "a tensor"};
  return kNames[static_cast<int>(k)];
}

struct Value;
using Ref = std::shared_ptr<Value>;

struct Value {
  Kind kind = Kind::none;
  int64_t integer = 0;      // int, bool
  std::string text;         // str; "module.name" of a class or function
  std::vector<Ref> items;   // tuple, list; a dict as key, value, key, value, ...
  PickledTensor tensor;     // tensor; a storage fills dtype, storage_key and storage_numel
};

Ref make(Kind kind) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  return v;
}

// The storage classes torch.save names in persistent ids, by element type.
const std::map<std::string, WeightDType>& storage_types() {
  static const std::map<std::string, WeightDType> types = {
      {"torch.FloatStorage", WeightDType::F32},  {"torch.BFloat16Storage", WeightDType::BF16},
      {"torch.HalfStorage", WeightDType::F16},   {"torch.DoubleStorage", WeightDType::F64},
      {"torch.LongStorage", WeightDType::I64},   {"torch.IntStorage", WeightDType::I32},
      {"torch.ShortStorage", WeightDType::I16},  {"torch.CharStorage", WeightDType::I8},
      {"torch.ByteStorage", WeightDType::U8},    {"torch.BoolStorage", WeightDType::BOOL}};
  return types;
}

constexpr const char* kOrderedDict = "collections.OrderedDict";
constexpr const char* kRebuildTensor = "torch._utils._rebuild_tensor_v2";
constexpr const char* kRebuildParameter = "torch._utils._rebuild_parameter";
constexpr const char* kRebuildParameterWithState = "torch._utils._rebuild_parameter_with_state";

class Unpickler {
 public:
  Unpickler(const unsigned char* data, uint64_t size, const std::string& path)
      : data_(data), size_(size), path_(path) {}

  Ref run() {
    for (;;) {
      op_at_ = at_;
      const unsigned char op = byte();
      switch (op) {
        case 0x80: byte(); break;  // PROTO n: the opcodes below are the same in every version
        case '.': return pop();    // STOP
        case 'c': global(); break;
        case 'q': memo_[little_endian(1)] = top(); break;  // BINPUT
        case 'r': memo_[little_endian(4)] = top(); break;  // LONG_BINPUT
        case 'h': push(memo(little_endian(1))); break;     // BINGET
        case 'j': push(memo(little_endian(4))); break;     // LONG_BINGET
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case 't': push(tuple(pop_mark())); break;
        case ')': push(tuple({})); break;
        case 0x85: push(tuple(pop_n(1))); break;
        case 0x86: push(tuple(pop_n(2))); break;
        case 0x87: push(tuple(pop_n(3))); break;
        case '}': push(make(Kind::dict)); break;
        case ']': push(make(Kind::list)); break;
        case 's': add_items(Kind::dict, pop_n(2)); break;   // SETITEM
        case 'u': add_items(Kind::dict, pop_mark()); break; // SETITEMS
        case 'a': add_items(Kind::list, pop_n(1)); break;   // APPEND
        case 'e': add_items(Kind::list, pop_mark()); break; // APPENDS
        case 'R': reduce(); break;
        case 'b': build(); break;
        case 'Q': persistent_load(); break;
        case 'J': push(integer(int32_t(little_endian(4)))); break;  // BININT
        case 'K': push(integer(int64_t(little_endian(1)))); break;  // BININT1
        case 'M': push(integer(int64_t(little_endian(2)))); break;  // BININT2
        case 0x8a: push(integer(long1())); break;
        case 0x88: push(boolean(true)); break;
        case 0x89: push(boolean(false)); break;
        case 'N': push(make(Kind::none)); break;
        case 'X': {  // BINUNICODE
          auto s = make(Kind::string);
          s->text = bytes(little_endian(4));
          push(s);
          break;
        }
        default:
          refuse(str("pickle opcode 0x", hex(op), " at byte ", op_at_, " (this reader knows the protocol-2 opcodes "
                     "torch.save writes by default)"), "");
      }
    }
  }

  [[noreturn]] void refuse(const std::string& found, const std::string& select) const {
    throw Error(str(path_, ": data.pkl holds ", found, "; convert it to safetensors: ",
                    safetensors_conversion_command(path_, select)));
  }

 private:
  [[noreturn]] void corrupt(const std::string& what) const {
    throw Error(str(path_, ": data.pkl: corrupt pickle at byte ", op_at_, ": ", what));
  }
  static std::string hex(unsigned v) {
    const char* digits = "0123456789abcdef";
    return {digits[v >> 4 & 15], digits[v & 15]};
  }

  unsigned char byte() {
    if (at_ >= size_) corrupt("ends without STOP");
    return data_[at_++];
  }
  uint64_t little_endian(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(byte()) << (8 * i);
    return v;
  }
  std::string bytes(uint64_t n) {
    if (n > size_ - at_) corrupt("a string runs past the end");
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  std::string line() {
    std::string s;
    for (unsigned char c = byte(); c != '\n'; c = byte()) s += char(c);
    return s;
  }
  int64_t long1() {  // LONG1: n bytes, two's complement, little-endian
    const int n = byte();
    if (n > 8) corrupt(str("an integer of ", n, " bytes"));
    uint64_t v = little_endian(n);
    if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign-extend
    return int64_t(v);
  }

  static Ref integer(int64_t v) {
    auto r = make(Kind::integer);
    r->integer = v;
    return r;
  }
  static Ref boolean(bool v) {
    auto r = make(Kind::boolean);
    r->integer = v;
    return r;
  }
  static Ref tuple(std::vector<Ref> items) {
    auto r = make(Kind::tuple);
    r->items = std::move(items);
    return r;
  }

  void push(Ref v) { stack_.push_back(std::move(v)); }
  Ref top() {
    if (stack_.empty()) corrupt("empty stack");
    return stack_.back();
  }
  Ref pop() {
    Ref v = top();
    stack_.pop_back();
    return v;
  }
  std::vector<Ref> pop_n(size_t n) {
    if (stack_.size() < n + (marks_.empty() ? 0 : marks_.back())) corrupt("stack underflow");
    std::vector<Ref> items(stack_.end() - long(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return items;
  }
  std::vector<Ref> pop_mark() {
    if (marks_.empty()) corrupt("no MARK");
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<Ref> items(stack_.begin() + long(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  Ref memo(uint64_t key) const {
    auto it = memo_.find(key);
    if (it == memo_.end()) corrupt(str("memo ", key, " read before it was written"));
    return it->second;
  }

  // Only the classes and functions of a tensor dict; anything else is an object we would
  // have to run Python to build.
  void global() {
    const std::string module = line(), name = line();
    auto g = make(Kind::global);
    g->text = module + "." + name;
    const bool known = g->text == kOrderedDict || g->text == kRebuildTensor || g->text == kRebuildParameter ||
                       g->text == kRebuildParameterWithState || storage_types().count(g->text);
    if (!known) refuse(str("a ", clipped(g->text), " object, not a dict of tensors (a pickled module?)"), ".state_dict()");
    push(g);
  }

  void add_items(Kind kind, std::vector<Ref> items) {
    Ref target = top();
    if (target->kind != kind) corrupt(str("items added to ", kind_name(target->kind)));
    if (kind == Kind::dict && items.size() % 2) corrupt("a dict item without a value");
    for (Ref& item : items) target->items.push_back(std::move(item));
  }

  // ('storage', torch.<Type>Storage, key, location, numel): the storage in data/<key>.
  void persistent_load() {
    const Ref id = pop();
    const auto& f = id->items;
    const bool well_formed = id->kind == Kind::tuple && f.size() == 5 && f[0]->kind == Kind::string &&
                             f[0]->text == "storage" && f[1]->kind == Kind::global && f[2]->kind == Kind::string &&
                             f[3]->kind == Kind::string && f[4]->kind == Kind::integer && f[4]->integer >= 0;
    if (!well_formed) corrupt("a persistent id that is not ('storage', type, key, location, numel)");
    const auto type = storage_types().find(f[1]->text);
    if (type == storage_types().end()) corrupt(str(f[1]->text, " as a storage type"));
    auto storage = make(Kind::storage);
    storage->tensor.dtype = type->second;
    storage->tensor.storage_key = f[2]->text;
    storage->tensor.storage_numel = f[4]->integer;
    push(storage);
  }

  static bool is_int_tuple(const Ref& v) {
    if (v->kind != Kind::tuple) return false;
    for (const Ref& i : v->items)
      if (i->kind != Kind::integer || i->integer < 0) return false;
    return true;
  }

  void reduce() {
    const Ref args = pop(), callable = pop();
    if (callable->kind != Kind::global || args->kind != Kind::tuple) corrupt("REDUCE of a non-callable");
    const auto& a = args->items;
    if (callable->text == kOrderedDict && a.empty()) {
      push(make(Kind::dict));
    } else if (callable->text == kRebuildTensor && (a.size() == 6 || a.size() == 7)) {
      // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
      if (a[0]->kind != Kind::storage || a[1]->kind != Kind::integer || a[1]->integer < 0 || !is_int_tuple(a[2]) ||
          !is_int_tuple(a[3]) || a[2]->items.size() != a[3]->items.size())
        corrupt("_rebuild_tensor_v2 arguments are not (storage, offset, size, stride, ...)");
      auto t = make(Kind::tensor);
      t->tensor = a[0]->tensor;
      t->tensor.storage_offset = a[1]->integer;
      for (const Ref& d : a[2]->items) t->tensor.shape.push_back(d->integer);
      for (const Ref& s : a[3]->items) t->tensor.strides.push_back(s->integer);
      push(t);
    } else if ((callable->text == kRebuildParameter && a.size() == 3) ||
               (callable->text == kRebuildParameterWithState && a.size() == 4)) {
      if (a[0]->kind != Kind::tensor) corrupt("an nn.Parameter around a non-tensor");
      push(a[0]);  // a Parameter's data is the tensor; requires_grad is training state
    } else {
      corrupt(str("a call of ", callable->text, " with ", a.size(), " arguments"));
    }
  }

  // BUILD sets an object's attributes. torch.save writes it for the OrderedDict of
  // state_dict(), whose _metadata (module versions) carries no weights.
  void build() {
    pop();
    if (top()->kind != Kind::dict) corrupt(str("attributes set on ", kind_name(top()->kind)));
  }

  const unsigned char* data_;
  uint64_t size_, at_ = 0, op_at_ = 0;
  std::string path_;
  std::vector<Ref> stack_;
  std::vector<size_t> marks_;
  std::map<uint64_t, Ref> memo_;
};

}  // namespace

std::vector<PickledTensor> unpickle_tensor_dict(const unsigned char* data, uint64_t size, const std::string& path) {
  Unpickler unpickler(data, size, path);
  const Ref root = unpickler.run();
  if (root->kind != Kind::dict) unpickler.refuse(str(kind_name(root->kind), ", not a dict of tensors"), "");
  std::vector<PickledTensor> tensors;
  std::set<std::string> names;
  for (size_t i = 0; i < root->items.size(); i += 2) {
    const Value &key = *root->items[i], &value = *root->items[i + 1];
    if (key.kind != Kind::string) unpickler.refuse(str("a dict key that is ", kind_name(key.kind), ", not a str"), "");
    if (value.kind == Kind::dict)
      unpickler.refuse(str("a dict under key ", emb::quoted_name(key.text), ", not a tensor (a nested checkpoint?)"),
                       str("['", key.text, "']"));
    if (value.kind != Kind::tensor)
      unpickler.refuse(str(kind_name(value.kind), " under key ", emb::quoted_name(key.text), ", not a tensor"), "");
    EMB_CHECK(names.insert(key.text).second, path, ": data.pkl: tensor ", emb::quoted_name(key.text), " appears twice");
    tensors.push_back(value.tensor);
    tensors.back().name = key.text;
  }
  return tensors;
}

}  // namespace emb
