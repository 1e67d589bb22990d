"""Seed helpers: every library gets all it can take of the 64-bit seed, and no import of it before use."""

import subprocess
import sys
import types
import unittest

import numpy as np

import mcmcaudit as ma

TOP = 2**64 - 1
HIGH = 2**40 + 5          # differs from LOW above bit 32 only
LOW = 5


class TestSeeds(unittest.TestCase):
    def test_no_library_imported_with_the_package(self):
        code = "import sys, mcmcaudit; print(sorted(m for m in ('numpy', 'torch', 'jax', 'tqdm') if m in sys.modules))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.strip(), "[]")

    def test_numpy_generator_takes_64_bits(self):
        a = ma.numpy_generator(TOP).standard_normal(4)
        self.assertTrue(np.array_equal(a, np.random.default_rng(TOP).standard_normal(4)))
        self.assertFalse(np.array_equal(ma.numpy_generator(HIGH).standard_normal(4), ma.numpy_generator(LOW).standard_normal(4)))

    def test_legacy_numpy_takes_64_bits(self):
        # RandomState and np.random.seed refuse a 64-bit integer ...
        with self.assertRaises(ValueError):
            np.random.RandomState(TOP)
        with self.assertRaises(ValueError):
            np.random.seed(TOP)
        # ... and take its two words, every bit counting.
        self.assertEqual(ma.legacy_seed_words(TOP), [2**32 - 1, 2**32 - 1])
        self.assertEqual(ma.legacy_seed_words(HIGH), [5, 2**8])
        x = ma.numpy_random_state(TOP).standard_normal(3)
        np.random.seed(ma.legacy_seed_words(TOP))
        self.assertTrue(np.array_equal(x, np.random.standard_normal(3)))
        self.assertFalse(np.array_equal(ma.numpy_random_state(HIGH).standard_normal(3),
                                        ma.numpy_random_state(LOW).standard_normal(3)))
        with self.assertRaises(ValueError):
            ma.legacy_seed_words(2**64)
        with self.assertRaises(ValueError):
            ma.legacy_seed_words(-1)

    def test_seed32_folds_the_high_word(self):
        self.assertEqual(ma.seed32(TOP), 0)  # xor of two equal words
        self.assertEqual(ma.seed32(HIGH), 5 ^ 2**8)
        self.assertNotEqual(ma.seed32(HIGH), ma.seed32(LOW))
        self.assertTrue(all(0 <= ma.seed32(s) < 2**32 for s in (0, 1, 2**32, TOP, HIGH)))

    def test_torch_generator(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no PyTorch (CI installs Debian's python3-torch)")
        g = ma.torch_generator(TOP)
        self.assertEqual(g.initial_seed(), ma.seed32(TOP))
        a = torch.randn(3, generator=ma.torch_generator(HIGH))
        b = torch.randn(3, generator=ma.torch_generator(LOW))
        self.assertFalse(torch.equal(a, b))

    def test_jax_key_words(self):
        # JAX is not installed here: a stand-in jax.numpy records the call,
        # which is what the key's data must be: [high word, low word] as uint32.
        calls = []
        jnp = types.SimpleNamespace(uint32="uint32", array=lambda v, dtype: calls.append((list(v), dtype)) or "key")
        jax = types.ModuleType("jax")
        jax.numpy = jnp
        saved = {k: sys.modules.get(k) for k in ("jax", "jax.numpy")}
        sys.modules["jax"], sys.modules["jax.numpy"] = jax, jnp
        try:
            self.assertEqual(ma.jax_key(HIGH), "key")
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        self.assertEqual(calls, [([2**8, 5], "uint32")])


if __name__ == "__main__":
    unittest.main()
