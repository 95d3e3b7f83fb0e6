// Parsing einsum equations (Note [Einsum labels] in equation.h).

#include "ops/einsum/equation.h"

#include <algorithm>
#include <cctype>

#include "backplane/error.h"
#include "backplane/op_spec.h"
#include "core/tensor_internal.h"

namespace bp::ops::einsum {
namespace {

constexpr int kEllipsisItem = -1;

// One input or output term: its items (a letter, or kEllipsisItem) with
// their positions in the text, a range of Syntax's shared arrays (one
// allocation for every term: this runs on every einsum and contract_path call).
struct Term {
  std::size_t start = 0;  // in the text
  std::size_t first = 0, last = 0;  // its items: Syntax::items[first, last)
  bool ellipsis = false;
  bool has_ellipsis() const { return ellipsis; }
  int size() const { return static_cast<int>(last - first); }
  int letters() const { return size() - (ellipsis ? 1 : 0); }
};

[[noreturn]] void bad(const std::string& text, const std::string& allowed, const std::string& got, std::size_t at) {
  throw_bad_value("einsum", got + " at index " + std::to_string(at) + " of '" + text + "'", allowed);
}

std::string quoted(char c) { return std::string("'") + c + "'"; }

struct Syntax {
  std::vector<Term> inputs;
  std::optional<Term> output;
  std::vector<int> items;          // every term's items, in order: the letter's char, or kEllipsisItem
  std::vector<std::size_t> at;     // and their positions in the text
  int item(const Term& t, int i) const { return items[t.first + static_cast<std::size_t>(i)]; }
  std::size_t pos(const Term& t, int i) const { return at[t.first + static_cast<std::size_t>(i)]; }
};

Syntax scan(const std::string& text) {
  Syntax s;
  s.items.reserve(text.size());
  s.at.reserve(text.size());
  s.inputs.reserve(8);
  Term current;
  bool in_output = false;
  auto close = [&](std::size_t next_start) {
    current.last = s.items.size();
    Term done = current;
    current = Term{};
    current.start = next_start;
    current.first = s.items.size();
    return done;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (std::isalpha(static_cast<unsigned char>(c))) {
      s.items.push_back(c);
      s.at.push_back(i);
    } else if (c == '.') {
      if (text.compare(i, 3, "...") != 0)
        bad(text, "'...' (three dots, nothing between them) for an ellipsis", "'.'", i);
      if (current.ellipsis)
        bad(text, "at most one '...' per " + std::string(in_output ? "output" : "operand"), "a second '...'", i);
      current.ellipsis = true;
      s.items.push_back(kEllipsisItem);
      s.at.push_back(i);
      i += 2;
    } else if (c == ',') {
      if (in_output) bad(text, "no ',' in the output (after '->')", "','", i);
      s.inputs.push_back(close(i + 1));
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '>') {
      if (in_output) bad(text, "at most one '->'", "a second '->'", i);
      s.inputs.push_back(close(i + 2));
      in_output = true;
      ++i;
    } else {
      bad(text, "subscripts in [a-zA-Z], ',', '->' or '...'", quoted(c), i);
    }
  }
  if (in_output)
    s.output = close(0);
  else
    s.inputs.push_back(close(0));
  return s;
}

std::string shape_text(const Shape& s) { return detail::shape_str(s); }

// Free letters to name the ellipsis dimensions in reports, then Greek ones.
std::vector<std::string> free_names(const std::string& text, int count) {
  std::vector<std::string> out;
  if (count == 0) return out;
  static constexpr char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (const char* p = letters; *p; ++p)
    if (static_cast<int>(out.size()) < count && text.find(*p) == std::string::npos) out.emplace_back(1, *p);
  for (int code = 0x3B1; static_cast<int>(out.size()) < count; ++code) {  // α, β, ... as UTF-8
    std::string u;
    u += static_cast<char>(0xC0 | (code >> 6));
    u += static_cast<char>(0x80 | (code & 0x3F));
    out.push_back(u);
  }
  return out;
}

}  // namespace

Equation parse_equation(const std::string& text, const std::vector<Shape>& shapes) {
  const Syntax syn = scan(text);
  const int n = static_cast<int>(shapes.size());
  if (static_cast<int>(syn.inputs.size()) != n)
    throw_bad_value("einsum", std::to_string(n) + " operand" + (n == 1 ? "" : "s") + " for '" + text + "'",
                    std::to_string(syn.inputs.size()) + " operand" + (syn.inputs.size() == 1 ? "" : "s") +
                        " (one per comma-separated term of the equation)");

  // Dimensions per operand, and how many the ellipsis covers.
  int ellipsis_dims = 0;
  std::vector<int> covered(static_cast<std::size_t>(n), 0);
  for (int k = 0; k < n; ++k) {
    const Term& t = syn.inputs[k];
    const int ndim = static_cast<int>(shapes[k].size()), letters = t.letters();
    // Error texts are built only when thrown: this runs for every operand of
    // every einsum and contract_path call, where the strings cost more than
    // a greedy path search.
    const auto term = [&] {
      return "operand " + std::to_string(k) + " (subscripts at index " + std::to_string(t.start) + " of '" + text +
             "')";
    };
    if (t.has_ellipsis() ? ndim < letters : ndim != letters)
      throw_bad_value("einsum", term() + " of " + std::to_string(ndim) + " dimensions " + shape_text(shapes[k]),
                      std::string(t.has_ellipsis() ? "at least " : "exactly ") + std::to_string(letters) +
                          " dimensions for " + std::to_string(letters) + " subscript" + (letters == 1 ? "" : "s") +
                          (t.has_ellipsis() ? " and '...'" : ""));
    covered[k] = ndim - letters;
    ellipsis_dims = std::max(ellipsis_dims, covered[k]);
  }

  Equation eq;
  eq.text = text;
  // Letters in order of first appearance, then the ellipsis dimensions.
  int label_of_char[128];
  std::fill(std::begin(label_of_char), std::end(label_of_char), -1);
  std::string letters_seen;
  for (const Term& t : syn.inputs)
    for (int i = 0; i < t.size(); ++i)
      if (const int item = syn.item(t, i); item != kEllipsisItem && label_of_char[item] < 0) {
        label_of_char[item] = static_cast<int>(letters_seen.size());
        letters_seen += static_cast<char>(item);
      }
  const int nletters = static_cast<int>(letters_seen.size());
  if (nletters + ellipsis_dims > kMaxLabels)
    throw_bad_value("einsum", std::to_string(nletters + ellipsis_dims) + " dimensions in all (letters and '...')",
                    "at most " + std::to_string(kMaxLabels));
  eq.sizes.assign(static_cast<std::size_t>(nletters + ellipsis_dims), 1);
  eq.names.reserve(eq.sizes.size());
  for (char c : letters_seen) eq.names.emplace_back(1, c);
  for (std::string& name : free_names(text, ellipsis_dims)) eq.names.push_back(std::move(name));

  // Sizes: equal, or 1 to broadcast; within one operand (a diagonal) equal.
  std::vector<int> size_from(eq.sizes.size(), -1);  // the operand that set a label's size
  std::vector<std::size_t> size_at(eq.sizes.size(), 0);
  std::vector<std::size_t> positions;
  eq.operand_labels.reserve(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const Term& t = syn.inputs[k];
    std::vector<int>& labels = eq.operand_labels.emplace_back();
    labels.reserve(shapes[k].size());
    positions.clear();
    for (int i = 0; i < t.size(); ++i) {
      if (syn.item(t, i) == kEllipsisItem) {
        for (int e = ellipsis_dims - covered[k]; e < ellipsis_dims; ++e) {
          labels.push_back(nletters + e);
          positions.push_back(syn.pos(t, i));
        }
      } else {
        labels.push_back(label_of_char[syn.item(t, i)]);
        positions.push_back(syn.pos(t, i));
      }
    }
    for (std::size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      const int64_t size = shapes[k][d];
      const bool letter = l < nletters;
      const auto what = [&] {
        return letter ? "subscript '" + eq.names[l] + "'" : std::string("the dimensions covered by '...'");
      };
      for (std::size_t e = 0; e < d; ++e)
        if (labels[e] == l && shapes[k][e] != size)
          throw_bad_value("einsum", std::to_string(shapes[k][e]) + " and " + std::to_string(size) + " for " + what() +
                                        " repeated in operand " + std::to_string(k) + " at index " +
                                        std::to_string(positions[d]) + " of '" + text + "'",
                          "equal sizes where a subscript repeats in one operand (its diagonal)");
      int64_t& have = eq.sizes[l];
      if (size == have || size == 1) continue;
      if (have != 1)
        throw_bad_value("einsum", std::to_string(have) + " (operand " + std::to_string(size_from[l]) + ", index " +
                                      std::to_string(size_at[l]) + ") and " + std::to_string(size) + " (operand " +
                                      std::to_string(k) + ", index " + std::to_string(positions[d]) + ") for " + what() +
                                      " of '" + text + "'",
                        "sizes that agree (equal, or 1 to broadcast)");
      have = size;
      size_from[l] = k;
      size_at[l] = positions[d];
    }
  }

  // The output.
  if (syn.output) {
    const Term& t = *syn.output;
    std::vector<bool> used(eq.sizes.size(), false);
    for (int i = 0; i < t.size(); ++i) {
      const int item = syn.item(t, i);
      if (item == kEllipsisItem) {
        for (int e = 0; e < ellipsis_dims; ++e) eq.output.push_back(nletters + e);
        continue;
      }
      const int l = label_of_char[item];
      if (l < 0)
        bad(text, "output subscripts that appear in the inputs", "'" + std::string(1, static_cast<char>(item)) + "'",
            syn.pos(t, i));
      if (used[l]) bad(text, "each output subscript once", "'" + eq.names[l] + "' again", syn.pos(t, i));
      used[l] = true;
      eq.output.push_back(l);
    }
  } else {
    for (int e = 0; e < ellipsis_dims; ++e) eq.output.push_back(nletters + e);
    std::vector<int> count(static_cast<std::size_t>(nletters), 0);
    for (const Term& t : syn.inputs)
      for (int i = 0; i < t.size(); ++i)
        if (const int item = syn.item(t, i); item != kEllipsisItem) ++count[label_of_char[item]];
    std::string once;
    for (int l = 0; l < nletters; ++l)
      if (count[l] == 1) once += letters_seen[l];
    std::sort(once.begin(), once.end());  // ASCII: A-Z before a-z, as PyTorch and NumPy
    for (char c : once) eq.output.push_back(label_of_char[static_cast<int>(c)]);
  }
  return eq;
}

Shape Equation::output_shape() const {
  Shape s;
  for (int l : output) s.push_back(sizes[l]);
  return s;
}

std::string Equation::subscripts(const std::vector<int>& labels) const {
  std::string out;
  for (int l : labels) out += names[l];
  return out;
}

std::string Equation::canonical() const {
  std::string out;
  for (std::size_t k = 0; k < operand_labels.size(); ++k) out += (k ? "," : "") + subscripts(operand_labels[k]);
  return out + "->" + subscripts(output);
}

Network Equation::network() const {
  Network net;
  net.sizes.assign(sizes.begin(), sizes.end());
  for (const auto& labels : operand_labels) {
    LabelSet s;
    for (int l : labels) s.add(l);
    net.inputs.push_back(s);
  }
  for (int l : output) net.output.add(l);
  return net;
}

std::string sublist_equation(const std::vector<std::vector<int64_t>>& sublists,
                             const std::optional<std::vector<int64_t>>& output) {
  auto term = [](const std::vector<int64_t>& list, const std::string& whose) {
    std::string out;
    for (int64_t v : list) {
      if (v == ops::kEllipsis) {
        out += "...";
      } else if (v >= 0 && v < 26) {
        out += static_cast<char>('A' + v);
      } else if (v >= 26 && v < 52) {
        out += static_cast<char>('a' + (v - 26));
      } else {
        throw_bad_value("einsum", std::to_string(v) + " in the sublist of " + whose,
                        "sublist entries in [0, 52) or Ellipsis (...)");
      }
    }
    return out;
  };
  std::string eq;
  for (std::size_t k = 0; k < sublists.size(); ++k) eq += (k ? "," : "") + term(sublists[k], "operand " + std::to_string(k));
  if (output) eq += "->" + term(*output, "the output");
  return eq;
}

}  // namespace bp::ops::einsum
