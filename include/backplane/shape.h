#pragma once
// bp::Shape: the sizes (or strides) of a tensor, a sequence of int64_t that
// keeps up to six values in the object itself.
//
// Note [Shapes without the heap]
// Every tensor holds two of these (shape and strides), and an op call makes
// and drops several tensors: the views it checks, the Params copy of its
// input, its output. As std::vector each was a heap allocation and a free,
// about a third of what a cached 4096-point FFT call spent outside FFTW.
// Tensors of up to six dims (every op's operands here but einsum's widest
// networks) now keep their sizes inline; longer ones spill to the heap. The
// interface is std::vector's subset the project uses, and a Shape converts
// to and from std::vector<int64_t> implicitly, so code written against
// either keeps working (a conversion copies). PyTorch's TensorImpl keeps
// sizes and strides inline for the same reason (five there).

#include <algorithm>
#include <compare>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <vector>

namespace bp {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  static constexpr size_type kInline = 6;

  Shape() noexcept = default;
  explicit Shape(size_type n, int64_t value = 0) { assign(n, value); }
  Shape(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit by design
  Shape(const Shape& o) {
    if (o.heap_ == nullptr) {
      copy_inline(o);
    } else {
      assign(o.begin(), o.end());
    }
  }
  Shape(Shape&& o) noexcept { take(o); }
  ~Shape() { release(); }

  Shape& operator=(const Shape& o) {
    if (this == &o) return *this;
    if (o.heap_ == nullptr && heap_ == nullptr) {
      copy_inline(o);
    } else {
      assign(o.begin(), o.end());
    }
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }

  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT

  // Element access.
  int64_t* data() noexcept { return heap_ ? heap_ : inline_; }
  const int64_t* data() const noexcept { return heap_ ? heap_ : inline_; }
  int64_t& operator[](size_type i) noexcept { return data()[i]; }
  const int64_t& operator[](size_type i) const noexcept { return data()[i]; }
  int64_t& front() noexcept { return data()[0]; }
  const int64_t& front() const noexcept { return data()[0]; }
  int64_t& back() noexcept { return data()[size_ - 1]; }
  const int64_t& back() const noexcept { return data()[size_ - 1]; }

  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }

  // Modifiers.
  void reserve(size_type n) {
    if (n > capacity_) grow(n);
  }
  void clear() noexcept { size_ = 0; }
  void push_back(int64_t v) {
    if (size_ == capacity_) grow(2 * capacity_);
    data()[size_++] = v;
  }
  int64_t& emplace_back(int64_t v) {
    push_back(v);
    return back();
  }
  void pop_back() noexcept { --size_; }
  void resize(size_type n, int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = static_cast<uint32_t>(n);
  }
  void assign(size_type n, int64_t value) {
    clear();
    resize(n, value);
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  void assign(It first, It last) {
    clear();
    if constexpr (std::is_base_of_v<std::forward_iterator_tag, typename std::iterator_traits<It>::iterator_category>)
      reserve(static_cast<size_type>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  void assign(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }

  iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_type{1}, v); }
  iterator insert(const_iterator pos, size_type n, int64_t v) {
    const size_type at = static_cast<size_type>(pos - begin());
    open_gap(at, n);
    std::fill(data() + at, data() + at + n, v);
    return data() + at;
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const size_type at = static_cast<size_type>(pos - begin());
    const Shape values(first, last);  // a copy: the range may lie in this shape
    open_gap(at, values.size());
    std::copy(values.begin(), values.end(), data() + at);
    return data() + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    int64_t* f = begin() + (first - cbegin());
    int64_t* l = begin() + (last - cbegin());
    std::copy(l, end(), f);
    size_ -= static_cast<uint32_t>(l - f);
    return f;
  }
  void swap(Shape& o) noexcept {
    Shape t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) noexcept {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) noexcept {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void release() noexcept {
    if (heap_) ::operator delete(heap_);
    heap_ = nullptr;
    capacity_ = kInline;
    size_ = 0;
  }
  // Moves o's elements here (this holds nothing) and leaves o empty.
  void take(Shape& o) noexcept {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
      o.heap_ = nullptr;
      o.capacity_ = kInline;
    } else {
      copy_inline(o);
    }
    o.size_ = 0;
  }
  // The whole inline array, a fixed-size copy (a few vector moves, where a
  // copy of size_ values was a call to memcpy); this holds no heap block.
  // memcpy, as the slots past size_ may never have been written.
  void copy_inline(const Shape& o) noexcept {
    std::memcpy(inline_, o.inline_, sizeof inline_);
    size_ = o.size_;
  }
  void grow(size_type n) {
    // A tensor's dims number in the tens; this bound keeps the byte count far from overflow.
    if (n > (size_type{1} << 31)) throw std::length_error("bp::Shape: too many values");
    n = std::max<size_type>(n, kInline);
    auto* p = static_cast<int64_t*>(::operator new(sizeof(int64_t) * n));
    std::memcpy(p, data(), sizeof(int64_t) * size_);
    if (heap_) ::operator delete(heap_);
    heap_ = p;
    capacity_ = static_cast<uint32_t>(n);
  }
  void open_gap(size_type at, size_type n) {
    reserve(size_ + n);
    std::copy_backward(data() + at, data() + size_, data() + size_ + n);
    size_ += static_cast<uint32_t>(n);
  }

  int64_t* heap_ = nullptr;  // nullptr: the elements are in inline_
  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  int64_t inline_[kInline];  // not initialised: a tensor's default construction writes nothing here
};

}  // namespace bp
