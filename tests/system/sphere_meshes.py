"""Sphere meshes for the system tests and benchmarks: the triangles of bem_solve's -mesh
icosphere:L in its order (element i is its element i), and the 4-way split of any mesh."""


def octasphere_nodes(level, keep_positive_x=False):
    """bem_solve's octasphere:L (each octant's face split 4^L times, projected on the unit
    sphere, outward), or its half x >= 0: nodes shared, triangles by octant."""
    import math
    nodes, tris, index, d = [], [], {}, 1 << level
    for octant in range(8):
        sx, sy, sz = (-1 if octant & b else 1 for b in (1, 2, 4))
        if keep_positive_x and sx < 0:
            continue

        def vertex(i, j):
            a, b = i / d, j / d
            p = (sx * a, sy * b, sz * max(1 - a - b, 0.0))
            n = math.sqrt(sum(q * q for q in p))
            key = tuple(round(q / n, 12) for q in p)
            if key not in index:
                index[key] = len(nodes)
                nodes.append(tuple(q / n for q in p))
            return index[key]

        def add(a, b, c):
            pa, pb, pc = nodes[a], nodes[b], nodes[c]
            u = [pb[k] - pa[k] for k in range(3)]
            w = [pc[k] - pa[k] for k in range(3)]
            cross = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
            if sum(cross[k] * (pa[k] + pb[k] + pc[k]) for k in range(3)) < 0:
                b, c = c, b
            tris.append((a, b, c))
        for i in range(d):
            for j in range(d - i):
                add(vertex(i, j), vertex(i + 1, j), vertex(i, j + 1))
                if i + j + 1 < d:
                    add(vertex(i + 1, j), vertex(i + 1, j + 1), vertex(i, j + 1))
    return nodes, tris


def refine(nodes, tris):
    """Split every triangle in four at its edge midpoints (exact on flat faces)."""
    nodes, mid, out = list(nodes), {}, []

    def m(a, b):
        key = (min(a, b), max(a, b))
        if key not in mid:
            mid[key] = len(nodes)
            nodes.append(tuple((x + y) / 2 for x, y in zip(nodes[a], nodes[b])))
        return mid[key]
    for a, b, c in tris:
        ab, bc, ca = m(a, b), m(b, c), m(c, a)
        out += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
    return nodes, out


def icosphere_nodes(level, radius=1.0, centre=(0.0, 0.0, 0.0)):
    """The icosahedral sphere of -mesh icosphere:L, scaled by radius and moved to centre."""
    t = (1 + 5 ** 0.5) / 2
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t),
         (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
         (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9),
         (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]

    def unit(p):
        r = sum(x * x for x in p) ** 0.5
        return tuple(x / r for x in p)
    v = [unit(p) for p in v]
    for _ in range(level):
        v, f = refine(v, f)
        v = [unit(p) for p in v]
    return [tuple(c + radius * x for c, x in zip(centre, p)) for p in v], f
