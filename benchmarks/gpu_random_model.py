"""Write a GGUF with Qwen2.5-Coder-1.5B's architecture and shapes but RANDOM weights.

For measuring llama.cpp throughput where the real model file cannot be copied (a machine without
network access): speed depends on the shapes and the tensor types, not on the weight values. The
tokenizer is the real Qwen2 one, copied from a vocab-only GGUF (llama.cpp ships
`models/ggml-vocab-qwen2.gguf`), so prompts tokenize as they would with the real model.

Weights are Q8_0 by default (written block by block, no quantizer needed) or F16; norms and biases
are F32, as in the published files. The real Q4_K_M file is smaller (about 1.1 GB against about
1.6 GB in Q8_0), so generation speed here is a conservative estimate for it.

Usage:
    python benchmarks/gpu_random_model.py --vocab ggml-vocab-qwen2.gguf --out random-1.5b.gguf
        [--like REAL.gguf] [--dtype q8_0|f16] [--layers N --hidden N --ff N --heads N --kv-heads N]

`--like` takes the hyperparameters from a real model's metadata. `gguf` (llama.cpp's gguf-py) and
numpy must be importable; `--gguf-py DIR` puts DIR on sys.path first.
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

# Qwen2.5-1.5B (and -Coder-1.5B-Instruct), from the published config.json.
QWEN25_15B = {
    "layers": 28,
    "hidden": 1536,
    "ff": 8960,
    "heads": 12,
    "kv_heads": 2,
    "context": 32768,
    "rope_theta": 1_000_000.0,
    "rms_eps": 1e-6,
}

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def _read_value(f: BinaryIO, vtype: int) -> Any:
    if vtype in _SCALARS:
        fmt = _SCALARS[vtype]
        return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]
    if vtype == _STRING:
        (n,) = struct.unpack("<Q", f.read(8))
        return f.read(n).decode("utf-8")
    if vtype == _ARRAY:
        sub, n = struct.unpack("<IQ", f.read(12))
        return sub, [_read_value(f, sub) for _ in range(n)]
    raise ValueError(f"unknown GGUF value type {vtype}")


def read_kv(path: Path) -> dict[str, tuple[int, Any]]:
    """Every metadata key of a GGUF file: key -> (value type, value); arrays as (subtype, list)."""
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        _version, _tensors, count = struct.unpack("<IQQ", f.read(20))
        out: dict[str, tuple[int, Any]] = {}
        for _ in range(count):
            key = _read_value(f, _STRING)
            (vtype,) = struct.unpack("<I", f.read(4))
            out[key] = (vtype, _read_value(f, vtype))
    return out


def config_like(path: Path) -> dict[str, Any]:
    kv = read_kv(path)
    arch = kv["general.architecture"][1]

    def get(suffix: str) -> Any:
        return kv[f"{arch}.{suffix}"][1]

    return {
        "layers": get("block_count"),
        "hidden": get("embedding_length"),
        "ff": get("feed_forward_length"),
        "heads": get("attention.head_count"),
        "kv_heads": get("attention.head_count_kv"),
        "context": get("context_length"),
        "rope_theta": get("rope.freq_base"),
        "rms_eps": get("attention.layer_norm_rms_epsilon"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", required=True, type=Path, help="vocab-only Qwen2 GGUF (tokenizer.* keys are copied)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--like", type=Path, help="take the hyperparameters from this real GGUF's metadata")
    ap.add_argument("--dtype", choices=("q8_0", "f16"), default="q8_0")
    ap.add_argument("--gguf-py", type=Path, help="directory holding llama.cpp's gguf package")
    ap.add_argument("--seed", type=int, default=0)
    for name in ("layers", "hidden", "ff", "heads", "kv-heads"):
        ap.add_argument(f"--{name}", type=int)
    args = ap.parse_args(argv)
    if args.gguf_py:
        sys.path.insert(0, str(args.gguf_py))
    import gguf
    import numpy as np

    cfg = dict(config_like(args.like) if args.like else QWEN25_15B)
    for name in ("layers", "hidden", "ff", "heads", "kv_heads"):
        value = getattr(args, name)
        if value is not None:
            cfg[name] = value
    hidden, ff, heads, kv_heads = cfg["hidden"], cfg["ff"], cfg["heads"], cfg["kv_heads"]
    head_dim = hidden // heads
    kv_dim = head_dim * kv_heads

    vocab_kv = read_kv(args.vocab)
    n_vocab = len(vocab_kv["tokenizer.ggml.tokens"][1][1])

    started = time.perf_counter()
    writer = gguf.GGUFWriter(args.out, "qwen2")
    writer.add_name(f"random-weights Qwen2 {cfg['layers']}x{hidden} ({args.dtype})")
    writer.add_block_count(cfg["layers"])
    writer.add_context_length(cfg["context"])
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(ff)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_freq_base(float(cfg["rope_theta"]))
    writer.add_layer_norm_rms_eps(float(cfg["rms_eps"]))
    ftype = gguf.LlamaFileType.MOSTLY_Q8_0 if args.dtype == "q8_0" else gguf.LlamaFileType.MOSTLY_F16
    writer.add_file_type(int(ftype))
    for key, (vtype, value) in vocab_kv.items():
        if key.startswith("tokenizer."):
            if vtype == _ARRAY:
                sub, items = value
                writer.add_key_value(key, items, gguf.GGUFValueType.ARRAY, gguf.GGUFValueType(sub))
            else:
                writer.add_key_value(key, value, gguf.GGUFValueType(vtype))
    writer.add_add_bos_token(False)  # as in Qwen2.5's own GGUF files

    # name -> (rows, cols) for matrices (numpy order: out, in), (n,) for vectors
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (n_vocab, hidden)}
    for i in range(cfg["layers"]):
        b = f"blk.{i}."
        shapes |= {
            b + "attn_norm.weight": (hidden,),
            b + "attn_q.weight": (hidden, hidden),
            b + "attn_q.bias": (hidden,),
            b + "attn_k.weight": (kv_dim, hidden),
            b + "attn_k.bias": (kv_dim,),
            b + "attn_v.weight": (kv_dim, hidden),
            b + "attn_v.bias": (kv_dim,),
            b + "attn_output.weight": (hidden, hidden),
            b + "ffn_norm.weight": (hidden,),
            b + "ffn_gate.weight": (ff, hidden),
            b + "ffn_up.weight": (ff, hidden),
            b + "ffn_down.weight": (hidden, ff),
        }
    shapes["output_norm.weight"] = (hidden,)  # no output.weight: tied to token_embd, as in Qwen2.5-1.5B

    rng = np.random.default_rng(args.seed)
    std = 0.02
    q8_scale = np.float16(std / 73.3)  # uniform int8 in [-127, 127] has a standard deviation of about 73.3

    def make(name: str, shape: tuple[int, ...]) -> tuple[Any, Any]:
        """(array to write, raw dtype or None)."""
        if len(shape) == 1:
            value = 1.0 if name.endswith("norm.weight") else 0.0
            return np.full(shape, value, dtype=np.float32), None
        rows, cols = shape
        if args.dtype == "f16":
            return (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float16), None
        blocks = cols // 32
        data = np.empty((rows, blocks, 34), dtype=np.uint8)
        data[:, :, :2] = np.frombuffer(q8_scale.tobytes(), dtype=np.uint8)
        data[:, :, 2:] = rng.integers(-127, 128, size=(rows, blocks, 32), dtype=np.int8).view(np.uint8)
        return data.reshape(rows, blocks * 34), gguf.GGMLQuantizationType.Q8_0

    def nbytes(name: str, shape: tuple[int, ...]) -> tuple[tuple[int, ...], Any, int, Any]:
        if len(shape) == 1:
            return shape, np.float32, shape[0] * 4, None
        if args.dtype == "f16":
            return shape, np.float16, shape[0] * shape[1] * 2, None
        byte_shape = (shape[0], shape[1] // 32 * 34)
        return byte_shape, np.uint8, byte_shape[0] * byte_shape[1], gguf.GGMLQuantizationType.Q8_0

    for name, shape in shapes.items():
        byte_shape, dtype, size, raw = nbytes(name, shape)
        writer.add_tensor_info(name, byte_shape, np.dtype(dtype), size, raw_dtype=raw)
    writer.write_header_to_file(args.out)
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    params = 0
    for name, shape in shapes.items():
        array, _raw = make(name, shape)
        writer.write_tensor_data(array)
        params += int(np.prod(shape))
    writer.close()
    size = args.out.stat().st_size
    print(
        f"wrote {args.out}: qwen2, RANDOM weights ({args.dtype}, norms/biases f32), {cfg['layers']} layers, "
        f"hidden {hidden}, ff {ff}, heads {heads}/{kv_heads}, vocab {n_vocab}, {params / 1e9:.2f} B params, "
        f"{size / 2**30:.2f} GiB, in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
