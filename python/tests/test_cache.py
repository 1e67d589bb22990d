"""The package's cache directory follows the tool's rules for the default checkpoint: nothing planted
there by someone else (a link, a directory everyone can write) makes the package write files, or build
and run a binary, elsewhere."""

import os
import tempfile
import unittest
from unittest import mock

import mcmcaudit as ma
from mcmcaudit import _binary
import samplers

MODEL = {"linreg": {"dim": 1, "alpha": 1, "beta": 1}}
DATA = {"records": [{"x": [0.3], "y": 0}, {"x": [-0.2], "y": 0}, {"x": [0], "y": 0}]}
NEIGHBOUR = {"adjacency": "replace-one", "index": 2, "record": {"x": [1], "y": 0}}


class TestPrivateCache(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cache = os.path.join(self.tmp.name, "cache")
        self.victim = os.path.join(self.tmp.name, "victim")
        os.makedirs(self.victim)
        env = mock.patch.dict(os.environ, {"XDG_CACHE_HOME": self.cache})
        env.start()
        self.addCleanup(env.stop)
        self.addCleanup(self.tmp.cleanup)

    def assertRefused(self, call, path, reason):
        with self.assertRaises(ma.AuditError) as cm:
            call()
        e = cm.exception
        self.assertEqual(e.exit_code, 2)
        self.assertIn("refusing the cache directory %s: %s" % (path, reason), e.message)
        self.assertNotIn("\n", str(e))
        self.assertEqual(os.listdir(self.victim), [], "something was written through the link")

    def test_created_private(self):
        path = _binary.private_cache_dir("runs", "k")
        self.assertEqual(path, os.path.join(self.cache, "mcmcaudit", "runs", "k"))
        for p in (os.path.join(self.cache, "mcmcaudit"), os.path.join(self.cache, "mcmcaudit", "runs"), path):
            self.assertEqual(os.stat(p).st_mode & 0o777, 0o700, p)

    def test_planted_links_and_open_directories_are_refused(self):
        os.makedirs(self.cache)
        mcm = os.path.join(self.cache, "mcmcaudit")
        os.symlink(self.victim, mcm)
        self.assertRefused(lambda: _binary.private_cache_dir("bin"), mcm, "is a symbolic link")
        os.unlink(mcm)
        os.makedirs(os.path.join(mcm, "runs"), mode=0o700)
        os.chmod(os.path.join(mcm, "runs"), 0o777)
        self.assertRefused(lambda: _binary.private_cache_dir("runs", "k"), os.path.join(mcm, "runs"),
                           "is writable by other users (mode 0777)")
        os.chmod(os.path.join(mcm, "runs"), 0o700)
        os.symlink(self.victim, os.path.join(mcm, "runs", "k"))
        self.assertRefused(lambda: _binary.private_cache_dir("runs", "k"), os.path.join(mcm, "runs", "k"),
                           "is a symbolic link")
        os.chmod(self.cache, 0o777)
        self.assertRefused(lambda: _binary.private_cache_dir("bin"), self.cache,
                           "is writable by other users (mode 0777) and not sticky")

    def test_audit_writes_nothing_through_a_planted_runs_link(self):
        # audit() keeps the files of a run under cache/mcmcaudit/runs/KEY;
        # with runs/ a link it must stop before writing them.
        os.makedirs(os.path.join(self.cache, "mcmcaudit"), mode=0o700)
        runs = os.path.join(self.cache, "mcmcaudit", "runs")
        os.symlink(self.victim, runs)
        self.assertRefused(lambda: ma.audit(samplers.gaussian, dim=1, releases=["release"], model=MODEL, data=DATA,
                                            neighbour=NEIGHBOUR, load=samplers.total, trials=40, progress=False),
                           runs, "is a symbolic link")


if __name__ == "__main__":
    unittest.main()
