"""LU factors of the square blocks of the loop-closure Jacobian, J_l,u and J_l,s (Kangaroo eqs. 7 and 22).

Loops of different limbs share no joint, so J_l,u and J_l,s are block diagonal up to an ordering of their rows and
columns: on kangaroo_like, J_l,u (70 × 70) is six blocks of at most 20 and J_l,s twelve of at most 8. Which entries
can be non-zero is fixed by the tree (a row's joints are those that move one of its loop's frames but not both), so
an ordering that gathers them near the diagonal is found once (reverse Cuthill–McKee): J_l,u becomes a band 20
wide, J_l,s one 11 wide, and LAPACK's band LU (dgbtrf, with partial pivoting) costs a fraction of the dense one
(dgetrf). Where the band is not much narrower than the matrix (one large loop system) the dense LU is used.

The same blocks make the sensitivities cheap: J_l,s⁻¹ J_l,o (eq. 22) and J_l,u⁻¹ J_l,a (eq. 7) have a column per
output or actuator, but each column touches only its own limb's blocks, so columns on disjoint blocks are summed into
one right-hand side and each solution is read back from its own blocks (Curtis, Powell and Reid's column grouping):
three right-hand sides instead of eighteen on kangaroo_like.
"""
import numpy as np
from scipy.linalg import lapack
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, reverse_cuthill_mckee

from humanoid_balance.model.errors import SingularConfigurationError

__all__ = ["LoopLU", "GroupedColumns"]

BAND_FRACTION = 0.5
"""The band LU is used when kl + ku + 1 is below this fraction of the matrix's size."""


def _rows_and_columns_graph(pattern):
    """The graph whose nodes are the m rows then the m columns of ``pattern`` (m, m), joined by its non-zeros."""
    m = len(pattern)
    return csr_matrix(np.block([[np.zeros((m, m), bool), pattern], [pattern.T, np.zeros((m, m), bool)]]))


def _band_order(graph, m):
    """Rows and columns in the order that brings the non-zeros near the diagonal: reverse Cuthill–McKee on the
    rows–columns graph (each limb's loops are one component of it, so its blocks come out one after the other, each
    itself banded)."""
    order = reverse_cuthill_mckee(graph, symmetric_mode=True)
    return order[order < m], order[order >= m] - m


class LoopLU:
    """Factorises J_l[:, columns] (m × m) at every linearization and solves with the factors.

    Args:
        support: (m, nv) the rows' structural pattern (non-zero where an entry of J_l can be).
        columns: the m columns of J_l that make the square block.
        name: the block's name in error messages (e.g. "J_l,u").
    """

    def __init__(self, support, columns, name):
        self.columns = np.asarray(columns, dtype=int)
        self.name = name
        m, nv = support.shape
        pattern = support[:, self.columns] != 0
        graph = _rows_and_columns_graph(pattern)
        blocks = connected_components(graph, directed=False)[1]
        self.row_blocks, self.column_blocks = blocks[:m], blocks[m:]  # the block of each row and column
        self.band = None
        self.position = np.arange(m)  # where each unknown sits in a solution of solve_unordered
        if pattern.any():
            self.rows, self.ordered_columns = _band_order(graph, m)
            i, j = np.nonzero(pattern[self.rows][:, self.ordered_columns])
            kl, ku = int(max((i - j).max(), 0)), int(max((j - i).max(), 0))
            if kl + ku + 1 < BAND_FRACTION * m:
                self.band = (kl, ku)
                storage = (2 * kl + ku + 1, m)  # dgbtrf's band storage, kl rows left for the fill-in of pivoting
                self._source = np.ravel_multi_index((self.rows[i], self.columns[self.ordered_columns[j]]), (m, nv))
                self._target = np.ravel_multi_index((kl + ku + i - j, j), storage, order="F")
                self._storage = storage
                self.position = np.argsort(self.ordered_columns)

    def factor(self, J_l):
        """The LU factors of J_l[:, columns] (J_l: (m, nv) at one configuration).

        Raises:
            SingularConfigurationError: the block is singular (a closed-chain singularity).
        """
        if not len(J_l):
            return None
        if self.band is None:
            lu, pivots, info = lapack.dgetrf(J_l[:, self.columns])
        else:
            band = np.zeros(self._storage, order="F")
            band.ravel(order="F")[self._target] = J_l.ravel().take(self._source)
            lu, pivots, info = lapack.dgbtrf(band, *self.band, overwrite_ab=1)
        if info > 0:
            raise SingularConfigurationError(f"closed-chain singularity: {self.name} is singular", float("inf"),
                                             float("inf"))
        return lu, pivots

    def solve(self, factors, rhs):
        """A⁻¹ rhs, A = J_l[:, columns] of the factors; rhs (m,) or (m, k)."""
        rhs = np.asarray(rhs, dtype=float)
        if factors is None:
            return np.zeros(rhs.shape)  # a serial robot: no loop rows
        solution = self.solve_unordered(factors, rhs)
        return solution if self.band is None else solution[self.position]

    def solve_unordered(self, factors, rhs):
        """A⁻¹ rhs (rhs (m,) or (m, k)) with its rows in the factors' order: unknown i in row ``position[i]``
        (factors not None). A = Pᵀ B Qᵀ with B the banded block (rows P, columns Q): A x = b ⇔ B (Qᵀx) = P b."""
        if self.band is None:
            return lapack.dgetrs(*factors, rhs)[0]
        return lapack.dgbtrs(factors[0], *self.band, rhs[self.rows], factors[1])[0]


class GroupedColumns:
    """A⁻¹ J_l[:, columns] for the square block A of a :class:`LoopLU`, with one right-hand side per group of
    columns whose rows lie in disjoint blocks of A (see the module).

    Args:
        lu: the LoopLU of A.
        support: (m, nv) the rows' structural pattern, as given to ``lu``.
        columns: the columns of J_l to solve for (e.g. the outputs or the actuators).
    """

    def __init__(self, lu, support, columns):
        self.lu = lu
        m, nv = support.shape
        touched = [set(lu.row_blocks[support[:, column] != 0]) for column in columns]
        groups = []  # the blocks each group's columns touch
        self.group = np.zeros(len(columns), dtype=int)
        for k, blocks in enumerate(touched):  # greedily: the first group whose blocks are all different
            group = next((g for g, taken in enumerate(groups) if not blocks & taken), len(groups))
            if group == len(groups):
                groups.append(set())
            groups[group] |= blocks
            self.group[k] = group
        self.summing = np.zeros((nv, len(groups)))  # J_l @ summing: each group's columns summed
        self.summing[np.asarray(columns, dtype=int), self.group] = 1.0
        self.mask = np.array([[block in blocks for blocks in touched] for block in lu.column_blocks],
                             dtype=float).reshape(m, len(columns))  # where each column's solution can be non-zero
        self._gathers = {}  # right-hand sides' count → flat indices of the columns' entries in a solution

    def solve(self, factors, J_l, *extra):
        """A⁻¹ J_l[:, columns] (m, len(columns)), then A⁻¹ of each further right-hand side (m,) in ``extra``."""
        m, groups = self.mask.shape[0], self.summing.shape[1]
        if factors is None:  # a serial robot: no loop rows
            return (np.zeros(self.mask.shape), *np.zeros((len(extra), m)))
        rhs = J_l @ self.summing
        if extra:
            rhs = np.column_stack([rhs, *extra])
        solution = self.lu.solve_unordered(factors, rhs)
        width = rhs.shape[1]
        gather = self._gathers.get(width)
        if gather is None:  # each column's entries, read from its group's solution in the factors' row order
            gather = self._gathers[width] = self.lu.position[:, None] * width + self.group[None, :]
        return (solution.take(gather) * self.mask, *solution[self.lu.position, groups:].T)
