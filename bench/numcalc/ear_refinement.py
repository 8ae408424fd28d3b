#!/usr/bin/env python3
"""The ear element of bench/numcalc/project_compare.py refined: which of NumCalc and bem_solve is
nearer the limit where they differ (the vibrating element's own pressure).

Usage: python3 bench/numcalc/ear_refinement.py NUMCALC BEM_SOLVE WORK

Level L = 3, 4, 5 of the sphere of radius 8.75 cm; the ear is the level-3 element nearest +y and,
at level L, its 4^(L-3) children (the icosphere's splitting keeps them together: elements
e 4^(L-3) .. (e+1) 4^(L-3) - 1), VELO 0.1 m/s; 500 and 4000 Hz. Prints the area-weighted mean
pressure over the ear and the pressure at the grid's first node (1.2 m), ours at L = 3..5 and
NumCalc's at L = 3, 4 (L = 5 takes NumCalc minutes).
"""
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NUMCALC, BEM_SOLVE, WORK = sys.argv[1:4]
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'system'))
sys.path.insert(0, HERE)
import numcalc_files as n, project_compare as pc
radius=0.0875
n3,t3=pc.icosphere(3,radius)
e=max(range(len(t3)),key=lambda i: pc.centroid(n3,t3[i])[1])
grid=("g",*pc.icosphere(1,1.2))
for L in (3,4,5):
  nodes,tris=pc.icosphere(L,radius)
  m=4**(L-3); kids=list(range(e*m,(e+1)*m))
  root=os.path.join(WORK, f'L{L}')
  shutil.rmtree(root,ignore_errors=True)
  nc=n.write_project(root,nodes,tris,[500.0,4000.0],boundary=[(kids[0],kids[-1],"VELO",0.1,-1,0.0,-1)],grid=grid)
  d=os.path.dirname(nc)
  res={}
  runs=[("ours",[BEM_SOLVE,'-bem_numcalc',nc,'-ksp_rtol','1e-9'])]
  if L<=4: runs.append(("numcalc",[NUMCALC]))
  for name,cmd in runs:
    subprocess.run(cmd,cwd=d,check=True,stdout=subprocess.DEVNULL,env=dict(os.environ,OMP_NUM_THREADS="2"))
    for s in (1,2):
      ids,p,_=n.read_result(f'{d}/be.out/be.{s}/pBoundary')
      A=[pc.area(nodes,tris[k]) for k in kids]
      ear=sum(p[k]*a for k,a in zip(kids,A))/sum(A)
      _,g,_=n.read_result(f'{d}/be.out/be.{s}/pEvalGrid')
      print(L,name,[500,4000][s-1],'ear mean p',ear,'grid[0]',g[0],flush=True)
    os.rename(f'{d}/be.out',f'{d}/be.{name}')
