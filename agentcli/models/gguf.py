"""A small GGUF header reader: metadata and a truncation check, without llama.cpp.

Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (versions 2 and 3, little-endian).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"

# Metadata value types.
_SCALARS: dict[int, str] = {
    0: "<B",  # uint8
    1: "<b",  # int8
    2: "<H",  # uint16
    3: "<h",  # int16
    4: "<I",  # uint32
    5: "<i",  # int32
    6: "<f",  # float32
    7: "<?",  # bool
    10: "<Q",  # uint64
    11: "<q",  # int64
    12: "<d",  # float64
}
_STRING = 8
_ARRAY = 9

# ggml tensor types: (elements per block, bytes per block). Unknown types skip the size check.
_GGML_TYPES: dict[int, tuple[int, int]] = {
    0: (1, 4),  # F32
    1: (1, 2),  # F16
    2: (32, 18),  # Q4_0
    3: (32, 20),  # Q4_1
    6: (32, 22),  # Q5_0
    7: (32, 24),  # Q5_1
    8: (32, 34),  # Q8_0
    9: (32, 36),  # Q8_1
    10: (256, 84),  # Q2_K
    11: (256, 110),  # Q3_K
    12: (256, 144),  # Q4_K
    13: (256, 176),  # Q5_K
    14: (256, 210),  # Q6_K
    15: (256, 292),  # Q8_K
    16: (256, 66),  # IQ2_XXS
    17: (256, 74),  # IQ2_XS
    18: (256, 98),  # IQ3_XXS
    19: (256, 50),  # IQ1_S
    20: (32, 18),  # IQ4_NL
    21: (256, 110),  # IQ3_S
    22: (256, 82),  # IQ2_S
    23: (256, 136),  # IQ4_XS
    24: (1, 1),  # I8
    25: (1, 2),  # I16
    26: (1, 4),  # I32
    27: (1, 8),  # I64
    28: (1, 8),  # F64
    29: (256, 56),  # IQ1_M
    30: (1, 2),  # BF16
    34: (256, 54),  # TQ1_0
    35: (256, 66),  # TQ2_0
    39: (32, 17),  # MXFP4
}

# Arrays longer than this (token lists, merges) are skipped and reported by length only.
_MAX_KEPT_ARRAY = 64


class GGUFError(ValueError):
    """The file is not a readable GGUF file."""


@dataclass
class GGUFInfo:
    """What the header says about a GGUF file."""

    path: Path
    version: int
    tensor_count: int
    metadata: dict[str, Any]
    file_size: int
    data_end: int | None = None  # where the last tensor ends; None when a tensor type is unknown
    skipped_arrays: dict[str, int] = field(default_factory=dict)  # key -> length of arrays not kept

    @property
    def architecture(self) -> str | None:
        value = self.metadata.get("general.architecture")
        return value if isinstance(value, str) else None

    def arch_value(self, suffix: str) -> Any:
        """`{architecture}.{suffix}`, e.g. `arch_value("context_length")`."""
        return self.metadata.get(f"{self.architecture}.{suffix}")

    @property
    def context_length(self) -> int | None:
        value = self.arch_value("context_length")
        return int(value) if value is not None else None

    @property
    def chat_template(self) -> str | None:
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) else None

    @property
    def name(self) -> str | None:
        value = self.metadata.get("general.name")
        return value if isinstance(value, str) else None

    def kv_bytes_per_token(self) -> int | None:
        """Bytes of f16 K and V cache one token takes, from the attention shape; None if unknown."""
        layers = self.arch_value("block_count")
        heads = self.arch_value("attention.head_count")
        kv_heads = self.arch_value("attention.head_count_kv") or heads
        embedding = self.arch_value("embedding_length")
        if not (layers and heads and embedding):
            return None
        key_len = self.arch_value("attention.key_length") or embedding // heads
        value_len = self.arch_value("attention.value_length") or embedding // heads
        return int(layers) * int(kv_heads) * (int(key_len) + int(value_len)) * 2


class _Reader:
    def __init__(self, stream: BinaryIO, size: int) -> None:
        self.stream = stream
        self.size = size

    def read(self, n: int) -> bytes:
        data = self.stream.read(n)
        if len(data) != n:
            raise GGUFError("truncated header")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > self.size:
            raise GGUFError("corrupt header (string length beyond end of file)")
        return self.read(length).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        length = self.unpack("<Q")
        if length > self.size:
            raise GGUFError("corrupt header (string length beyond end of file)")
        self.stream.seek(length, 1)

    def value(self, vtype: int) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        raise GGUFError(f"corrupt header (unknown value type {vtype})")

    def array(self) -> tuple[list[Any] | None, int]:
        """Return (values, length); values is None when the array is too long to keep."""
        etype = self.unpack("<I")
        length = self.unpack("<Q")
        if length > self.size:
            raise GGUFError("corrupt header (array length beyond end of file)")
        if length <= _MAX_KEPT_ARRAY and etype != _ARRAY:
            return [self.value(etype) for _ in range(length)], length
        if etype in _SCALARS:
            self.stream.seek(length * struct.calcsize(_SCALARS[etype]), 1)
        elif etype == _STRING:
            for _ in range(length):
                self.skip_string()
        elif etype == _ARRAY:
            for _ in range(length):
                self.array()
        else:
            raise GGUFError(f"corrupt header (unknown array type {etype})")
        return None, length


def read_gguf(path: str | Path) -> GGUFInfo:
    """Parse the header of `path`; raise `GGUFError` if it is not GGUF, corrupt or truncated."""
    path = Path(path)
    try:
        size = path.stat().st_size
        stream = path.open("rb", buffering=1 << 20)
    except OSError as exc:
        raise GGUFError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with stream:
        reader = _Reader(stream, size)
        magic = stream.read(4)
        if magic != MAGIC:
            raise GGUFError(f"not a GGUF file (magic {magic!r}, expected {MAGIC!r})")
        version = reader.unpack("<I")
        if version not in (2, 3):
            raise GGUFError(f"unsupported GGUF version {version}")
        tensor_count = reader.unpack("<Q")
        kv_count = reader.unpack("<Q")
        if tensor_count > size or kv_count > size:
            raise GGUFError("corrupt header (counts beyond end of file)")
        metadata: dict[str, Any] = {}
        skipped: dict[str, int] = {}
        for _ in range(kv_count):
            key = reader.string()
            vtype = reader.unpack("<I")
            if vtype == _ARRAY:
                values, length = reader.array()
                if values is None:
                    skipped[key] = length
                else:
                    metadata[key] = values
            else:
                metadata[key] = reader.value(vtype)
        data_end = _tensor_data_end(reader, tensor_count, int(metadata.get("general.alignment", 32)))
    info = GGUFInfo(path, version, tensor_count, metadata, size, data_end, skipped)
    if data_end is not None and data_end > size:
        raise GGUFError(f"truncated ({size} bytes, tensors end at {data_end})")
    return info


def _tensor_data_end(reader: _Reader, tensor_count: int, alignment: int) -> int | None:
    end = 0
    known = True
    for _ in range(tensor_count):
        reader.skip_string()
        n_dims = reader.unpack("<I")
        if n_dims > 8:
            raise GGUFError("corrupt header (tensor with more than 8 dimensions)")
        elements = 1
        for _ in range(n_dims):
            elements *= reader.unpack("<Q")
        ttype = reader.unpack("<I")
        offset = reader.unpack("<Q")
        if ttype in _GGML_TYPES:
            block, block_bytes = _GGML_TYPES[ttype]
            end = max(end, offset + elements // block * block_bytes)
        else:
            known = False
            end = max(end, offset)
    header_end = reader.stream.tell()
    data_start = (header_end + alignment - 1) // alignment * alignment
    return data_start + end if known else None


def check_magic(path: str | Path) -> bool:
    """True when `path` starts with the GGUF magic."""
    try:
        with Path(path).open("rb") as stream:
            return stream.read(4) == MAGIC
    except OSError:
        return False
