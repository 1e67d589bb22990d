# Reference values of the RDP accountants' tests (mpmath, 50 digits):
# the same per-step bounds as closedform/bounds_sgm.go and
# closedform/bounds_heikkila.go, composed over T and converted to (ε, δ) by
# Mironov 2017, Prop. 3 and by the better of it and Balle et al. 2020,
# Thm 21, minimised over integer orders. Run: /usr/bin/python3 rdp_reference.py
import mpmath as mp
mp.mp.dps = 50

def addrm(q, z, a):
    """Mironov, Talwar & Zhang 2019: exact add/remove RDP of the sampled Gaussian."""
    q = mp.mpf(q); z = mp.mpf(z)
    s = sum(mp.binomial(a, k)*(1-q)**(a-k)*q**k*mp.e**((k*k-k)/(2*z*z)) for k in range(a+1))
    return mp.log(s)/(a-1)

def Mj(j, rho):
    return sum(mp.binomial(j, k)*(-1)**(j-k)*mp.e**(rho*k*(k-1)) for k in range(j+1))

def direct(q, z, a, wor):
    """The direct moment bound of PoissonSGMReplaceOneRDP / WORSGMReplaceOneRDP."""
    q = mp.mpf(q); z = mp.mpf(z); rho = 1/(2*z*z)
    if wor:
        r = 4*rho; B2 = 2*mp.e**(8*rho) - 2*mp.e**(4*rho)
    else:
        r = rho; B2 = 4*mp.sinh(2*rho)
    cache = {}
    def M(j):
        if j not in cache:
            cache[j] = min(Mj(j, r), 1 + mp.e**(r*j*(j-1)))
        return cache[j]
    def B(j):
        if j == 2: return B2
        if j % 2 == 0: return 2**j*M(j)
        return 2**j*mp.sqrt(M(j-1)*M(j+1))
    s = 1 + sum(mp.binomial(a, j)*q**j*(1-q)**(1-j)*B(j) for j in range(2, a+1))
    return mp.log(s)/(a-1)

def thm9(q, z, a):
    """Wang, Balle & Kasiviswanathan 2019, Thm 9, Gaussian with sensitivity 2C."""
    q = mp.mpf(q); z = mp.mpf(z)
    e = lambda j: 2*mp.mpf(j)/(z*z)
    s = 1 + q**2*mp.binomial(a, 2)*min(4*(mp.e**e(2)-1), 2*mp.e**e(2))
    s += sum(2*q**j*mp.binomial(a, j)*mp.e**((j-1)*e(j)) for j in range(3, a+1))
    return mp.log(s)/(a-1)

def poisson_ro(q, z, a):
    aa = mp.mpf(a)
    weak = (2*aa-1)/(2*(aa-1))*addrm(q, z, 2*a) + addrm(q, z, 2*a-1)
    return min(direct(q, z, a, False), weak)

def wor_ro(q, z, a):
    return min(direct(q, z, a, True), thm9(q, z, a))

def convert(rdp_at, orders, d):
    """(Mironov ε, its order), (improved ε, its order) over the orders."""
    bm = bi = None
    for a in orders:
        r = rdp_at(a)
        m = r + mp.log(1/d)/(a-1)
        b = min(m, r + mp.log(mp.mpf(a-1)/a) - (mp.log(d) + mp.log(a))/(a-1))
        if bm is None or m < bm[0]: bm = (m, a)
        if bi is None or b < bi[0]: bi = (b, a)
    return bm, bi

def heikkila(b, q, T):
    def eps21(a):
        a = mp.mpf(a); bf = mp.mpf(b)
        if 5*a >= bf: return mp.inf
        return 5/(2*bf) + mp.log(2*bf/(bf-5*a))/(2*(a-1)) + 2*a/(bf-5*a)
    def eq22(a):
        e2 = eps21(2)
        s = 1 + q**2*mp.binomial(a, 2)*min(4*(mp.e**e2-1), 2*mp.e**e2)
        s += sum(2*q**j*mp.binomial(a, j)*mp.e**((j-1)*eps21(j)) for j in range(3, a+1))
        return mp.log(s)/(a-1)
    return lambda a: T*eq22(a)

if __name__ == "__main__":
    rng = range(2, 65)
    for name, f, T, d in [
        ("Poisson q=0.01 z=1.1 T=1e4 replace-one", lambda a: poisson_ro(0.01, 1.1, a), 10000, '1e-5'),
        ("Poisson q=0.01 z=1.1 T=1e4 add/remove", lambda a: addrm(0.01, 1.1, a), 10000, '1e-5'),
        ("WOR q=0.01 z=2 T=1000 replace-one", lambda a: wor_ro(0.01, 2, a), 1000, '1e-5'),
        ("Poisson q=0.001 z=4 T=1e5 replace-one", lambda a: poisson_ro(0.001, 4, a), 100000, '1e-6'),
        ("digits: Poisson q=32/1438 z=100q T=900", lambda a: poisson_ro(mp.mpf(32)/1438, 100*mp.mpf(32)/1438, a), 900, '1e-5'),
    ]:
        (m, ma), (i, ia) = convert(lambda a: T*f(a), rng, mp.mpf(d))
        print(name, "Mironov", mp.nstr(m, 17), ma, "improved", mp.nstr(i, 17), ia)
    for name, b, n, T, d, top in [("Heikkilä done-when", 1000, 10**6, 20000, '1e-6', 200),
                                  ("Heikkilä c2", 500, 50000, 1000, '1e-5', 100)]:
        (m, ma), (i, ia) = convert(heikkila(b, mp.mpf(b)/n, T), range(2, top), mp.mpf(d))
        print(name, "Mironov", mp.nstr(m, 17), ma, "improved", mp.nstr(i, 17), ia)
    # Gaussian curve α·μ²/2 and Barker's α·ρ: the improved conversion at real orders.
    for mu, d in [(1, '1e-5'), (1.5, '1e-5')]:
        d = mp.mpf(d)
        f = lambda a: a*mu**2/2 + mp.log((a-1)/a) - (mp.log(d) + mp.log(a))/(a-1)
        a = mp.findroot(lambda a: mp.diff(f, a), 5)
        v, k = min((f(k), k) for k in range(2, 200))
        print("Gaussian μ =", mu, "real orders", mp.nstr(f(a), 20), "integer orders", mp.nstr(v, 20), "at", k)
    for d in ['0.1', '1e-3', '1e-5', '1e-12']:
        d = mp.mpf(d); f = lambda a: a + mp.log((a-1)/a) - (mp.log(d) + mp.log(a))/(a-1)
        a = mp.findroot(lambda a: mp.diff(f, a), 2.5)
        print("Barker ρ = 1, δ =", d, mp.nstr(f(a), 20))
    def lbb(mu, a, e): return (a-1)*(a*mu**2/2-e) + (a-1)*mp.log(1-1/mp.mpf(a)) - mp.log(a)
    for mu, e in [(1, 2), (1.5, 5)]:
        print("profile μ =", mu, "ε =", e, mp.nstr(mp.exp(min(lbb(mu, a, e) for a in range(2, 400))), 20))
