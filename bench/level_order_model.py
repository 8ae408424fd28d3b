"""Where a level-dependent low-frequency order would pay: a model of the unit sphere's octree levels.

Mirrors, at the commit that adds it, order_for_tolerance (src/fmm/fmm.cpp), needs_high_frequency,
diagonal_far_min_kw, wideband_switch_level and wideband_order (src/fmm/wideband_plan.cpp) on a
root box of width 2 with the levels a rigid-sphere mesh of 10 elements a wavelength and about 20
points a leaf gives; per low-frequency level the order it needs (at least the tolerance's), and
the low-frequency M2L cost of those orders against today's one order (p^3 a pair, pairs ~ 4^level
on a surface). Prints one row per (k D, eps): the levels, the tolerance's p, the FMM's p, the
switch level (-1: none), the per-level orders from the conversion level down, and the cost ratio.

    python3 bench/level_order_model.py
"""
import math

def order_for_tol(t):
    orders=[4,8,12,16]; errs=[1.3e-1,2.6e-3,1.6e-5,1.5e-6]
    if t>=errs[0]: return 4
    for i in range(3):
        if t>=errs[i+1]:
            x=math.log(errs[i]/t)/math.log(errs[i]/errs[i+1])
            return math.ceil(orders[i]+x*(orders[i+1]-orders[i])-1e-9)
    return min(math.ceil(16+math.log(errs[3]/t)/math.log(2)),60)
def excess(c,kd,eps): return c*math.log10(1/eps)**(2/3)*kd**(1/3)
def needs_hf(k,w,p,eps):
    kd=k*math.sqrt(3)*w; return p < kd+excess(0.8,kd,eps)
def min_kw(eps):
    digits=[3,4,5,6,7,8,10]; kw=[1.0,1.5,3.0,4.0,6.0,8.0,16.0]
    x=math.log10(1/eps); v=kw[0]
    if x>digits[6]: v=kw[6]*2**((x-digits[6])/2)
    else:
        for i in range(6):
            if digits[i]<=x<=digits[i+1]:
                t=(x-digits[i])/(digits[i+1]-digits[i]); v=math.exp((1-t)*math.log(kw[i])+t*math.log(kw[i+1]))
    return 1.1*v
R=2.0
def plan(k,eps,levels):
    w=lambda l: R/2**l
    p0=order_for_tol(eps)
    for p in range(p0,61):
        fin=-1
        for l in range(2,levels):
            if needs_hf(k,w(l),p,eps): fin=l
        if fin<0: return p,-1
        conv=fin+1
        if conv<levels and k*w(conv)>=min_kw(eps): return p,fin
    return 60,-1
def needed(k,l,eps,p0):
    w=R/2**l
    p=p0
    while needs_hf(k,w,p,eps): p+=1
    return p
print("kD eps levels p0 p switch per-level-p  M2L-cost-ratio")
for eps in [1e-4,1e-6,1e-8]:
  for kD in [8,16,24,32,48,64,100,128,200,256]:
    k=kD/2
    # leaf level: 10 elements per wavelength, 3 sources each, ~60 points a leaf cell
    lam=2*math.pi/k; edge=lam/10; N=4*math.pi/(edge**2*0.433)
    levels=2
    while N/(1.5*4*math.pi/(R/2**levels)**2) > 20: levels+=1
    levels+=1
    p0=order_for_tol(eps); p,sw=plan(k,eps,levels)
    first=2 if sw<0 else sw+1
    pl=[max(p0,needed(k,l,eps,p0)) for l in range(first,levels)]
    cells=[4**l for l in range(first,levels)]
    ratio=sum(c*q**3 for c,q in zip(cells,pl))/sum(c*p**3 for c in cells)
    print(f"{kD:4} {eps:.0e} {levels} {p0} {p} {sw} {pl} {ratio:.2f}")
