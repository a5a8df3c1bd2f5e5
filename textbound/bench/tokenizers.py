"""Tokenizer speed: impl beside `tokenizers` (and `tiktoken` where a byte-level vocabulary lets it
encode) on the same texts in one run, one thread each, as ratios.

Per family and text: tokens per second of each engine, the ratio to tokenizers (tokenizers' time
/ the engine's time: above 1 is faster than tokenizers) and whether the ids are identical to
tokenizers'. Then the time to load, the memory a loaded tokenizer holds (and its peak while
loading), each measured in a fresh subprocess, and ``encode_batch`` throughput with several
processes for impl (one thread each: the GIL) against tokenizers' own threads.

The texts are built from the corpora, deterministically:

- prose: about 1 MB of the Latin-script prose paragraphs, shuffled with a fixed seed;
- random words: 20,000 distinct random lowercase words, new ones for every repetition (a word
  seen before would be a cache hit, which is the prose row's business);
- long word: one 50,000-character word, one letter repeated, then random letters;
- code and multilingual: about 1 MB of the code files and the other scripts' prose, shuffled.

Each measurement is repeated (at least three times, more while ``seconds`` lasts) with the engines
interleaved, and the best time of each is kept: the machine is shared, and the best is the run
least disturbed. A family with a 262,144-token vocabulary (``large_vocabulary_family``), generated
once and cached, stands for the largest vocabularies served (Gemma 3's size) when timing loads.
"""
from __future__ import annotations

import gc
import json
import multiprocessing
import os
import random
import string
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..families import Family
from ..families.cache import default_cache_dir, publish
from ..plan.implementation import Implementation

TEXT_BYTES = 1_000_000
RANDOM_WORDS = 20_000
LONG_WORD = 50_000
MIN_REPEATS = 3
MAX_REPEATS = 20
LARGE_VOCABULARY = 262_144
BATCH_PROCESSES = max(2, os.cpu_count() or 1)
# impl's targets: ratios to tokenizers' speed, but seconds for the long word and for a load.
PROSE_TARGET = 1.5
RANDOM_WORDS_TARGET = 1.0
NO_PRE_TOKENIZER_TARGET = 1 / 20  # prose through a family whose model takes whole lines
LONG_WORD_SECONDS = 0.5
LOAD_SECONDS = 1.0
MEMORY_TARGET = 3.0  # impl's loaded tokenizer at most this many times tokenizers'
FIRST_TEXT = "Hello world"  # encoded right after loading


# -- texts ----------------------------------------------------------------------------------------

def _shuffled_paragraphs(categories: Callable[[str], bool], seed: int) -> str:
    """About TEXT_BYTES of the corpus files whose category passes, paragraph by paragraph."""
    from textbound.corpora import text_files

    paragraphs = [paragraph + "\n\n" for name, text in text_files().items() if categories(name)
                  for paragraph in text.split("\n\n") if paragraph.strip()]
    rng, parts, size = random.Random(seed), [], 0
    while size < TEXT_BYTES:
        parts.append(rng.choice(paragraphs))
        size += len(parts[-1].encode("utf-8"))
    return "".join(parts)


def prose_text(repeat: int = 0) -> str:
    return _shuffled_paragraphs(lambda name: name == "prose_latin", seed=0)


def mixed_text(repeat: int = 0) -> str:
    return _shuffled_paragraphs(lambda name: name.startswith("code_") or
                                (name.startswith("prose_") and name != "prose_latin"), seed=1)


def random_words_text(repeat: int = 0) -> str:
    """RANDOM_WORDS distinct words of 3 to 12 random letters, new ones for each ``repeat``."""
    rng, words = random.Random(f"words-{repeat}"), set()
    while len(words) < RANDOM_WORDS:
        words.add("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12))))
    return " ".join(sorted(words, key=lambda word: rng.random()))


def long_word_text(repeat: int = 0) -> str:
    """One LONG_WORD-character word: a letter repeated for half of it, random letters after."""
    rng = random.Random(f"long-{repeat}")
    return "a" * (LONG_WORD // 2) + "".join(rng.choices(string.ascii_lowercase, k=LONG_WORD - LONG_WORD // 2))


TEXTS: dict[str, Callable[[int], str]] = {
    "prose": prose_text,
    "random words": random_words_text,
    "long word": long_word_text,
    "code+multilingual": mixed_text,
}


# -- engines --------------------------------------------------------------------------------------

@dataclass
class Engine:
    name: str
    encode: Callable[[str], list[int]]


def _engines(impl: Implementation, family: Family) -> list[Engine]:
    """tokenizers (first: the reference every ratio and id comparison is taken against), impl and,
    when the family's vocabulary converts, tiktoken."""
    from tokenizers import Tokenizer as OracleTokenizer

    from textbound.oracles.tiktoken_oracle import TiktokenOracle

    oracle = OracleTokenizer.from_file(str(family.path / "tokenizer.json"))
    engines = [Engine("tokenizers", lambda text: oracle.encode(text, add_special_tokens=False).ids),
               Engine("impl", partial(impl.Tokenizer.from_dir(family.path).encode, add_special_tokens=False))]
    tiktoken = TiktokenOracle.for_family(family.path)
    if tiktoken is not None:
        engines.append(Engine("tiktoken", tiktoken.encode))
    return engines


@dataclass
class Timing:
    seconds: float = float("inf")  # the best of the repetitions
    tokens: int = 0
    identical: bool = True  # ids equal to the reference's (the first engine's) on every repetition


def time_engines(engines: list[Engine], make_text: Callable[[int], str], seconds: float) -> dict[str, Timing]:
    """Each engine's best CPU time (this process's, all its threads) on ``make_text(repeat)``, the
    engines interleaved in each repeat: on shared cores the CPU a call takes varies far less than
    its wall time, and a library that spread one call over threads would be charged for each."""
    best = {engine.name: Timing() for engine in engines}
    started, repeat = time.perf_counter(), 0
    while repeat < MIN_REPEATS or (repeat < MAX_REPEATS and time.perf_counter() - started < seconds):
        text = make_text(repeat)
        reference = None
        for engine in engines:
            gc.collect()
            start = time.process_time()
            ids = engine.encode(text)
            elapsed = time.process_time() - start
            reference = ids if reference is None else reference
            timing = best[engine.name]
            timing.seconds, timing.tokens = min(timing.seconds, elapsed), len(ids)
            timing.identical = timing.identical and ids == reference
        repeat += 1
    return best


# -- load time and memory, each in a fresh process --------------------------------------------------

def _memory_mib(field: str) -> float:
    """A memory figure of this process from /proc/self/status: VmRSS (resident now) or VmHWM (the
    peak since it started; getrusage's maximum would be the parent's when that was larger)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise OSError(f"no {field} in /proc/self/status")


def measure_load(engine: str, impl_name: str, path: str) -> dict[str, float]:
    """In this (fresh) process: seconds to load and then to encode a first text, MiB held after
    both and MiB of peak through both (above what the process held before)."""
    if engine == "impl":
        load = Implementation(impl_name).Tokenizer.from_dir
        path_arg: object = Path(path)
    else:
        from tokenizers import Tokenizer as OracleTokenizer
        load, path_arg = OracleTokenizer.from_file, str(Path(path) / "tokenizer.json")
    gc.collect()
    before = _memory_mib("VmRSS")
    start = time.perf_counter()
    tokenizer = load(path_arg)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    tokenizer.encode(FIRST_TEXT, add_special_tokens=False)  # what a structure built on first use costs
    first_encode = time.perf_counter() - start
    gc.collect()
    held, peak = _memory_mib("VmRSS") - before, _memory_mib("VmHWM") - before
    return {"seconds": seconds, "first_encode_seconds": first_encode, "held_mib": held, "peak_mib": peak}


def load_in_subprocess(engine: str, impl_name: str, path: Path) -> dict[str, float]:
    output = subprocess.run([sys.executable, "-m", "textbound.bench.tokenizers", engine, impl_name, str(path)],
                            capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
    return json.loads(output.stdout)


def best_load(engine: str, impl_name: str, path: Path, repeats: int = MIN_REPEATS) -> dict[str, float]:
    runs = [load_in_subprocess(engine, impl_name, path) for _ in range(repeats)]
    return {key: min(run[key] for run in runs) for key in runs[0]}


# -- encode_batch with several processes ----------------------------------------------------------

_worker_tokenizer = None


def _load_worker(impl_name: str, path: str) -> None:
    global _worker_tokenizer
    _worker_tokenizer = Implementation(impl_name).Tokenizer.from_dir(path)


def _encode_chunk(texts: list[str]) -> int:
    encode_batch = getattr(_worker_tokenizer, "encode_batch", None)  # an --impl without one: text by text
    batch = encode_batch(texts, add_special_tokens=False) if encode_batch \
        else [_worker_tokenizer.encode(text, add_special_tokens=False) for text in texts]
    return sum(map(len, batch))


def batch_rates(impl: Implementation, family: Family, texts: list[str], processes: int) -> tuple[float, float]:
    """Tokens per second of impl's encode_batch over ``processes`` worker processes, and of
    tokenizers' encode_batch (its own threads); the best of two passes (the first warms up)."""
    from tokenizers import Tokenizer as OracleTokenizer

    chunks = [texts[start::processes * 8] for start in range(processes * 8)]
    with multiprocessing.get_context("spawn").Pool(processes, _load_worker, (impl.name, str(family.path))) as pool:
        impl_best = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            tokens = sum(pool.map(_encode_chunk, chunks))
            impl_best = min(impl_best, time.perf_counter() - start)
    oracle = OracleTokenizer.from_file(str(family.path / "tokenizer.json"))
    oracle_best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        oracle.encode_batch(texts, add_special_tokens=False)
        oracle_best = min(oracle_best, time.perf_counter() - start)
    return tokens / impl_best, tokens / oracle_best


# -- a 262k vocabulary ----------------------------------------------------------------------------

def large_vocabulary_tokenizer_json(vocab_size: int = LARGE_VOCABULARY, seed: int = 0) -> str:
    """A byte-level BPE tokenizer.json with ``vocab_size`` tokens: the 256 byte characters, then
    tokens each made by one merge of two shorter ones (chosen at random among tokens of at most
    eight characters), in merge order, so that tiktoken can read it too. GPT-2's pre-tokenizer."""
    from textbound.impl.tokenizer.byte_level import BYTE_TO_CHAR

    rng = random.Random(seed)
    tokens = [BYTE_TO_CHAR[byte] for byte in range(256)]
    vocab = {token: token_id for token_id, token in enumerate(tokens)}
    short = list(tokens)  # merge candidates
    merges = []
    while len(vocab) < vocab_size:
        left, right = rng.choice(short), rng.choice(short)
        merged = left + right
        if merged in vocab:
            continue
        vocab[merged] = len(vocab)
        merges.append([left, right])
        if len(merged) <= 8:
            short.append(merged)
    special = {"id": vocab_size, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
               "rstrip": False, "normalized": False, "special": True}
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [special], "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }, ensure_ascii=False)


def large_vocabulary_family(cache_dir: Path | None = None) -> Family:
    """The generated LARGE_VOCABULARY-token family, built on first use and cached."""
    target = (cache_dir or default_cache_dir()) / "bench" / f"bytelevel-{LARGE_VOCABULARY}"
    if not (target / "tokenizer.json").is_file():
        publish(target, {"tokenizer.json": large_vocabulary_tokenizer_json(), "tokenizer_config.json": "{}"})
    return Family(f"bytelevel-{LARGE_VOCABULARY // 1024}k", target, "bench")


# -- the table ------------------------------------------------------------------------------------

def _verdict(met: bool) -> str:
    return "ok" if met else "MISSED"


def _text_target(family: Family, text_name: str, timings: dict[str, Timing]) -> str:
    """The target for this row, met or not ('' for rows without one)."""
    ratio = timings["tokenizers"].seconds / timings["impl"].seconds
    if text_name == "prose":
        no_pre_tokenizer = json.loads((family.path / "tokenizer.json").read_text(encoding="utf-8")) \
            .get("pre_tokenizer") is None
        target = NO_PRE_TOKENIZER_TARGET if no_pre_tokenizer else PROSE_TARGET
        return f"ratio >= {target:g}: {_verdict(ratio >= target)}"
    if text_name == "random words":
        return f"ratio >= {RANDOM_WORDS_TARGET:g}: {_verdict(ratio >= RANDOM_WORDS_TARGET)}"
    if text_name == "long word":
        return f"<= {LONG_WORD_SECONDS:g} s: {_verdict(timings['impl'].seconds <= LONG_WORD_SECONDS)}"
    return ""


def _load_figures(load: dict[str, float]) -> str:
    return (f"{load['seconds']:.2f} s (+{load['first_encode_seconds']:.2f}) "
            f"{load['held_mib']:.0f} MiB (peak {load['peak_mib']:.0f})")


def tokenizer_bench(families: list[Family], impl: Implementation, seconds: float,
                    large_vocabulary: bool = True) -> None:
    """Print the speed table for ``families`` (plus the generated 262k family when
    ``large_vocabulary``); ``seconds`` bounds the repetitions of each measurement."""
    if not impl.provides("tokenizer"):
        print(f"tokenizer bench: {impl.name} has no tokenizer")
        return
    families = [*families, *([large_vocabulary_family()] if large_vocabulary else [])]
    print(f"tokenizer encode, one thread, best of >= {MIN_REPEATS}; ratio = tokenizers' time / engine's time")
    print(f"{'family':<18} {'text':<18} {'engine':<11} {'tokens/s':>11} {'seconds':>8} {'ratio':>7} {'ids':>10}  target")
    for family in families:
        engines = _engines(impl, family)
        for text_name, make_text in TEXTS.items():
            timings = time_engines(engines, make_text, seconds)
            for engine in engines:
                timing = timings[engine.name]
                ratio = timings["tokenizers"].seconds / timing.seconds
                same = "reference" if engine.name == "tokenizers" else ("identical" if timing.identical else "DIFFER")
                target = _text_target(family, text_name, timings) if engine.name == "impl" else ""
                print(f"{family.name:<18} {text_name:<18} {engine.name:<11} {timing.tokens / timing.seconds:>11,.0f} "
                      f"{timing.seconds:>8.3f} {ratio:>7.2f} {same:>10}  {target}")
    print(f"\nload, each in a fresh process (best of {MIN_REPEATS}): seconds to load (+ to encode a first text), "
          f"MiB held then (peak)")
    for family in families:
        impl_load, oracle_load = best_load("impl", impl.name, family.path), best_load("tokenizers", impl.name, family.path)
        memory = impl_load["held_mib"] / max(oracle_load["held_mib"], 1.0)
        load_target = f"; load <= {LOAD_SECONDS:g} s: {_verdict(impl_load['seconds'] <= LOAD_SECONDS)}" \
            if family.origin == "bench" else ""
        print(f"{family.name:<18} impl {_load_figures(impl_load)}; tokenizers {_load_figures(oracle_load)}; "
              f"memory x{memory:.1f} <= {MEMORY_TARGET:g}: {_verdict(memory <= MEMORY_TARGET)}{load_target}")
    lines = [line for line in prose_text().splitlines() if line]
    print(f"\nencode_batch of {len(lines):,} prose lines: impl in {BATCH_PROCESSES} processes, tokenizers' threads")
    for family in families:
        impl_rate, oracle_rate = batch_rates(impl, family, lines, BATCH_PROCESSES)
        print(f"{family.name:<18} impl {impl_rate:>11,.0f} tokens/s; tokenizers {oracle_rate:>11,.0f} tokens/s; "
              f"ratio {impl_rate / oracle_rate:.2f}")


if __name__ == "__main__":  # measure_load in a fresh process: ENGINE IMPL_MODULE FAMILY_PATH
    print(json.dumps(measure_load(*sys.argv[1:4])))
