"""Variable-length sequences for the recurrent modules, as ``torch.nn.utils.rnn``.

``PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)``:
``data`` holds the steps of every sequence, time-major, the sequences of a
step in decreasing order of length; ``batch_sizes[t]`` is how many
sequences are still running at step t. ``pack_padded_sequence`` makes one
from a padded batch and its lengths, ``pad_packed_sequence`` undoes it,
``pack_sequence`` / ``pad_sequence`` work from a list of sequences. The
rearranging is done on the host with NumPy (a CUDA tensor makes a round
trip); the recurrent modules themselves run on the padded, time-major form
with one length per sequence (Note [RNN variable lengths] in
src/ops/rnn/params.h).
"""

from collections import namedtuple

import numpy as np

from ..._tensor import Tensor, asarray

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence", "pad_sequence",
           "invert_permutation"]


def _host(t):
    """A NumPy array of ``t`` (a Tensor, array or list) and the device it came from."""
    if isinstance(t, Tensor):
        device = t.device
        return np.asarray(t if device == "cpu" else t.to(device="cpu")), device
    return np.asarray(t), "cpu"


def _back(arr, device):
    t = asarray(np.ascontiguousarray(arr))
    return t if device == "cpu" else t.to(device=device)


def invert_permutation(permutation):
    """The inverse of a permutation (None stays None)."""
    if permutation is None:
        return None
    p, _ = _host(permutation)
    out = np.empty_like(p)
    out[p] = np.arange(p.size, dtype=p.dtype)
    return asarray(out)


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as torch.nn.utils.rnn.PackedSequence."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None and isinstance(batch_sizes, Tensor) and batch_sizes.device != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                             "manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch ([T, B, *], or [B, T, *] with batch_first) of sequences of ``lengths``.

    With ``enforce_sorted`` the lengths must decrease (RuntimeError
    otherwise, as PyTorch); without it they are sorted here and the
    permutation kept in the PackedSequence.
    """
    x, device = _host(input)
    lens = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths, dtype=np.int64).reshape(-1)
    if batch_first:
        x = np.swapaxes(x, 0, 1)
    batch = x.shape[1]
    if lens.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
                           f"(batch_size={batch})")
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
        order = np.arange(batch)
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = order
    lens = lens[order]
    if lens.size and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if lens.size and lens[0] > x.shape[0]:
        raise ValueError(f"pack_padded_sequence: expected lengths of at most the padded length {x.shape[0]}, "
                         f"got {int(lens[0])}")
    x = x[:, order]
    steps = int(lens[0]) if lens.size else 0
    batch_sizes = np.array([int(np.sum(lens > t)) for t in range(steps)], dtype=np.int64)
    data = np.concatenate([x[t, :batch_sizes[t]] for t in range(steps)], axis=0) if steps else x[:0, 0]
    return PackedSequence(_back(data, device), asarray(batch_sizes),
                          None if sorted_indices is None else asarray(sorted_indices.astype(np.int64)), None)


def _padded_of(sequence, padding_value=0.0, total_length=None):
    """The time-major padded array of a PackedSequence (still in sorted order), the lengths and the device."""
    data, device = _host(sequence.data)
    batch_sizes, _ = _host(sequence.batch_sizes)
    steps = batch_sizes.size
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps_out = total_length
    else:
        steps_out = steps
    batch = int(batch_sizes[0]) if steps else 0
    out = np.full((steps_out, batch) + data.shape[1:], padding_value, dtype=data.dtype)
    at = 0
    for t in range(steps):
        n = int(batch_sizes[t])
        out[t, :n] = data[at:at + n]
        at += n
    lengths = np.array([int(np.sum(batch_sizes > b)) for b in range(batch)], dtype=np.int64)
    return out, lengths, device


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undoes pack_padded_sequence: (padded [T, B, *] or [B, T, *], lengths as an int64 Tensor), original order."""
    out, lengths, device = _padded_of(sequence, padding_value, total_length)
    if sequence.unsorted_indices is not None:
        unsorted, _ = _host(sequence.unsorted_indices)
        out = out[:, unsorted]
        lengths = lengths[unsorted]
    if batch_first:
        out = np.swapaxes(out, 0, 1)
    return _back(out, device), asarray(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of different lengths ([L_i, *] each) into one padded batch."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    arrays = [_host(s) for s in sequences]
    device = arrays[0][1]
    longest = max(a.shape[0] for a, _ in arrays)
    out = np.full((longest, len(arrays)) + arrays[0][0].shape[1:], padding_value, dtype=arrays[0][0].dtype)
    for b, (a, _) in enumerate(arrays):
        if padding_side == "right":
            out[:a.shape[0], b] = a
        else:
            out[longest - a.shape[0]:, b] = a
    if batch_first:
        out = np.swapaxes(out, 0, 1)
    return _back(out, device)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences ([L_i, *] each)."""
    lengths = [(_host(s)[0]).shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)
