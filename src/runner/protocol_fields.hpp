// The worker protocol's machinery (protocol.hpp holds the messages): a message's field list
// (Field, Presence, Flattened), its writing and reading both ways (to_json / from_json), its
// schema, and protocol::read / protocol::encode. How a reply's field is read is its presence
// (protocol.hpp says what each means). Internal to the runner component.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>
#include "kgym/measurement.hpp"

namespace kgym::runner::protocol {

/// How a field is written and read (the header's comment says how).
enum class Presence { required, defaulted, lenient, nullable, flattened };

/// One field of a message: its name on the wire, its member, its presence.
template <class S, class T>
struct Field {
  const char* name;
  T S::*member;
  Presence presence;
};

template <class S, class T>
constexpr Field<S, T> field(const char* name, T S::*member, Presence presence = Presence::defaulted) {
  return {name, member, presence};
}

/// A record (measurement.hpp) whose fields a reply carries at its top level, as they came; read
/// by the record's serializer when asked (a json exception when they do not make one).
template <class Record>
struct Flattened {
  nlohmann::json fields = nlohmann::json::object();
  void get_to(Record& into) const { fields.get_to(into); }
  Record get() const { return fields.get<Record>(); }
};

/// A message: a struct with its name and field list.
template <class T>
concept Message = requires {
  { T::kName } -> std::convertible_to<std::string_view>;
  T::fields();
};

namespace detail {

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};
template <class T> struct is_string_map : std::false_type {};
template <class V> struct is_string_map<std::map<std::string, V>> : std::true_type {};
template <class T> struct is_flattened : std::false_type {};
template <class T> struct is_flattened<Flattened<T>> : std::true_type {};

/// The name of a record type in the schema.
template <class T> constexpr const char* record_name() {
  if constexpr (std::is_same_v<T, LoadRecord>) return "LoadRecord";
  else if constexpr (std::is_same_v<T, CaseRecord>) return "CaseRecord";
  else if constexpr (std::is_same_v<T, TimingRecord>) return "TimingRecord";
  else if constexpr (std::is_same_v<T, LaunchRecord>) return "LaunchRecord";
  else if constexpr (std::is_same_v<T, RooflineRecord>) return "RooflineRecord";
  else return nullptr;
}

/// A field's type in the schema, in the words of protocol.py's type_name: bool, int, float, str,
/// any (JSON of any shape), list[T], dict[str,T], optional[T], a message's or a record's name.
template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_integral_v<T>) return "int";
  else if constexpr (std::is_floating_point_v<T>) return "float";
  else if constexpr (std::is_same_v<T, std::string>) return "str";
  else if constexpr (std::is_same_v<T, nlohmann::json>) return "any";
  else if constexpr (is_optional<T>::value) return "optional[" + type_name<typename T::value_type>() + "]";
  else if constexpr (is_vector<T>::value) return "list[" + type_name<typename T::value_type>() + "]";
  else if constexpr (is_flattened<T>::value) return type_name<std::remove_cvref_t<decltype(std::declval<T>().get())>>();
  else if constexpr (Message<T>) return std::string(T::kName);
  else if constexpr (is_string_map<T>::value) return "dict[str," + type_name<typename T::mapped_type>() + "]";
  else {
    static_assert(record_name<T>() != nullptr, "a field type the schema has no name for");
    return record_name<T>();
  }
}

/// `j` read as a T the lenient way: nullopt when it is not one (a message: not an object).
template <class T>
std::optional<T> lenient_get(const nlohmann::json& j) {
  if constexpr (is_optional<T>::value) {
    auto inner = lenient_get<typename T::value_type>(j);
    if (!inner) return std::nullopt;
    return T(std::move(*inner));
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    return j;
  } else if constexpr (is_vector<T>::value) {
    if (!j.is_array()) return std::nullopt;
    T out;
    for (const auto& x : j)
      if (auto v = lenient_get<typename T::value_type>(x)) out.push_back(std::move(*v));
    return out;
  } else {
    if constexpr (Message<T>)
      if (!j.is_object()) return std::nullopt;
    try {
      return j.get<T>();
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
  }
}

template <class S, class T>
void write_field(nlohmann::json& j, const S& s, const Field<S, T>& f) {
  const T& x = s.*f.member;
  if constexpr (is_flattened<T>::value) {
    for (const auto& [k, v] : x.fields.items()) j[k] = v;
  } else if constexpr (is_optional<T>::value) {
    if (x) j[f.name] = *x;
    else if (f.presence == Presence::nullable) j[f.name] = nullptr;
  } else {
    j[f.name] = x;
  }
}

template <class S, class T>
void read_field(const nlohmann::json& j, S& s, const Field<S, T>& f) {
  T& x = s.*f.member;
  if constexpr (is_flattened<T>::value) {
    x.fields = j;
  } else if (f.presence == Presence::required) {
    if constexpr (is_optional<T>::value) x = j.at(f.name).template get<typename T::value_type>();
    else j.at(f.name).get_to(x);
  } else if (f.presence == Presence::lenient) {
    if (!j.is_object()) return;
    const auto it = j.find(f.name);
    if (it == j.end()) return;
    if (auto v = lenient_get<T>(*it)) x = std::move(*v);
  } else if constexpr (is_optional<T>::value) {  // defaulted or nullable
    if (!j.contains(f.name)) return;
    const auto& v = j.at(f.name);
    if (f.presence == Presence::nullable && v.is_null()) x.reset();
    else x = v.template get<typename T::value_type>();
  } else {  // defaulted: json::value's rule (a json exception when `j` is no object)
    x = j.value(f.name, x);
  }
}

}  // namespace detail

template <Message T>
void to_json(nlohmann::json& j, const T& v) {
  j = nlohmann::json::object();
  if constexpr (requires { T::kOp; }) j["op"] = std::string(T::kOp);
  std::apply([&](const auto&... f) { (detail::write_field(j, v, f), ...); }, T::fields());
}

template <Message T>
void from_json(const nlohmann::json& j, T& v) {
  std::apply([&](const auto&... f) { (detail::read_field(j, v, f), ...); }, T::fields());
}

/// A message read from a frame's header by its fields' presence (json exceptions as they say).
template <Message T>
T read(const nlohmann::json& header) {
  T v;
  from_json(header, v);
  return v;
}

/// A request already written as its frame's header: a request that a supervisor's clock times is
/// written before the clock starts (the clock holds its sending and parsing, not its writing).
template <Message R>
struct Encoded {
  nlohmann::json header;
};
template <Message R>
Encoded<R> encode(const R& req) {
  return {nlohmann::json(req)};
}

/// A message's entry in the schema: {"op"?, "fields": {name: {"type", "required"}}}; a
/// flattened record's field is named "*".
template <Message T>
nlohmann::json schema_of() {
  nlohmann::json fields = nlohmann::json::object();
  std::apply(
      [&](const auto&... f) {
        ((fields[detail::is_flattened<std::remove_cvref_t<decltype(std::declval<T>().*f.member)>>::value ? "*" : f.name] = {
              {"type", detail::type_name<std::remove_cvref_t<decltype(std::declval<T>().*f.member)>>()},
              {"required", f.presence == Presence::required || f.presence == Presence::flattened}}),
         ...);
      },
      T::fields());
  nlohmann::json out = {{"fields", fields}};
  if constexpr (requires { T::kOp; }) out["op"] = std::string(T::kOp);
  return out;
}

using Json = nlohmann::json;
constexpr Presence required = Presence::required, defaulted = Presence::defaulted, lenient = Presence::lenient,
                   nullable = Presence::nullable, flattened = Presence::flattened;

}  // namespace kgym::runner::protocol
