"""The length model of a task: the measured length of a world as a function of its scale
parameters, fit from the task's calibration table. An unseen (target, seed) is built from the
model's prediction and, when that world lands outside the tolerance, corrected by the seed's
own offset from the model (a correction or two), instead of searched.

    length ≈ curve(p) + per_fine·(fine − default fine of p)

The primary count p carries the bulk of the length; the fine count (distractors, when the task
has a fine knob) fills the remainder of one primary step and absorbs the seed's offset. The
curve runs through the table's own points (`knots`: the mean length at each primary count the
table holds, at the default fine count), straight between them and beyond the last along the
nearest segment: over 8K-2M a task's growth changes regime (a schedule that stops widening, a
count that is capped while its fine knob carries the long tiers), which one quadratic cannot
follow. Where seeds scatter around one smooth curve instead, the least-squares quadratic
(intercept + per_primary·p + per_primary_sq·p²) follows the points better and is used alone:
the fit keeps whichever misses them less.

A generator that can sketch a world without building it (`length_features`: how many items it
will hold and how many characters their texts have) gets a second, per-seed estimate,

    length ≈ c0 + c1·feature1 + c2·feature2 + ...

fit on the same table; a first build is aimed with it, so that a seed whose content runs long or
short is caught before anything is built."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from envs.core.registry import Task


class LengthModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    intercept: float
    per_primary: float
    per_primary_sq: float
    per_fine: float | None = None  # tokens per fine item; None: the task has no fine knob
    features: list[float] | None = None  # [c0, c1, ...] of the estimate from length features
    knots: list[tuple[int, float]] | None = Field(default=None, min_length=2)  # (primary, length at the
    # default fine count), both rising

    def estimate(self, features: tuple[float, ...]) -> float:
        """The length a world with these length features is estimated to measure."""
        assert self.features is not None and len(features) == len(self.features) - 1
        return self.features[0] + sum(c * f for c, f in zip(self.features[1:], features, strict=True))

    def curve(self, primary: int) -> float:
        """Predicted length with the default fine count: through the knots when the model has
        them, else the quadratic."""
        knots = self.knots
        if knots is None:
            return self.intercept + self.per_primary * primary + self.per_primary_sq * primary * primary
        i = bisect.bisect_left(knots, primary, key=lambda knot: knot[0])  # the first knot at or past it
        (p0, s0), (p1, s1) = knots[min(max(i - 1, 0), len(knots) - 2):][:2]
        return s0 + (s1 - s0) * (primary - p0) / (p1 - p0)

    def value(self, task: Task, params: dict[str, int]) -> float:
        """Predicted length of `params` (resolved or not)."""
        resolved = task.resolve_params(params)
        primary = resolved[task.spec.scale.primary]
        size = self.curve(primary)
        fine = task.spec.scale.fine
        if fine is not None and self.per_fine is not None:
            size += self.per_fine * (resolved[fine] - _default_fine(task, primary))
        return size

    def predict(self, task: Task, target: int) -> dict[str, int]:
        """The parameters whose world the model puts at `target`. With a fine knob: the largest
        primary count the curve keeps at or under the target, the fine count making up the
        rest (so a second build has fine items to remove as well as to add); without one: the
        primary count nearest to the target."""
        scale = task.spec.scale
        if scale.fine is None or self.per_fine is None:
            return {scale.primary: self._primary_for(task, target, nearest=True)}
        primary = self._primary_for(task, target, nearest=False)
        extra = round((target - self.curve(primary)) / self.per_fine)
        return {scale.primary: primary, scale.fine: max(0, _default_fine(task, primary) + extra)}

    def correct(self, task: Task, params: dict[str, int], measured: int, target: int) -> dict[str, int]:
        """Parameters for a second build after `params` measured `measured`: the same primary
        count with the fine count moved by the miss when it can absorb it, else the prediction
        for the target shifted by the seed's offset from the model."""
        scale = task.spec.scale
        resolved = task.resolve_params(params)
        miss = target - measured
        if scale.fine is not None and self.per_fine is not None:
            fine = resolved[scale.fine] + round(miss / self.per_fine)
            if fine >= 0:
                return {scale.primary: resolved[scale.primary], scale.fine: fine}
        offset = measured - self.value(task, resolved)
        corrected = self.predict(task, max(1, round(target - offset)))
        if task.resolve_params(corrected) == resolved:  # one primary step the other way
            step = 1 if miss > 0 else -1
            corrected = {scale.primary: min(scale.hi, max(scale.lo, resolved[scale.primary] + step))}
        return corrected

    def _primary_for(self, task: Task, target: int, nearest: bool) -> int:
        """The largest primary count whose curve is at or under `target` (the smallest count
        when none is), or with `nearest` the count whose curve is nearest to it. The curve
        rises over the scale's range: the fit guarantees it."""
        lo, hi = task.spec.scale.lo, task.spec.scale.hi
        if self.curve(lo) >= target:
            return lo
        while hi - lo > 1:  # invariant: curve(lo) < target, and curve(hi) >= target or hi is the top
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.curve(mid) < target else (lo, mid)
        if self.curve(hi) <= target:
            return hi
        return hi if nearest and self.curve(hi) - target <= target - self.curve(lo) else lo


def _default_fine(task: Task, primary: int) -> int:
    fine = task.spec.scale.fine
    assert fine is not None
    return task.resolve_params({task.spec.scale.primary: primary})[fine]


def fit(task: Task, points: Iterable[tuple[dict[str, int], int]], per_fine: float | None) -> LengthModel:
    """Least squares on relative error over measured (params, length) points; points whose
    fine count is not the default are moved onto the default by `per_fine` (skipped without
    it). The quadratic term is dropped when it would make the curve fall inside the range."""
    scale = task.spec.scale
    rows: list[tuple[int, float]] = []
    for params, measured in points:
        resolved = task.resolve_params(params)
        primary = resolved[scale.primary]
        size = float(measured)
        if scale.fine is not None:
            surplus = resolved[scale.fine] - _default_fine(task, primary)
            if surplus and per_fine is None:
                continue
            size -= (per_fine or 0.0) * surplus
        rows.append((primary, size))
    if len({p for p, _ in rows}) < 3:
        raise ValueError(f"{task.name}: too few distinct calibration points to fit a length model")
    knots = _knots(rows)
    for degree in (2, 1):
        coef = _weighted_fit(rows, degree)
        model = LengthModel(intercept=coef[0], per_primary=coef[1],
                            per_primary_sq=coef[2] if degree == 2 else 0.0,
                            per_fine=per_fine if scale.fine is not None else None)
        if all(model.per_primary + 2 * model.per_primary_sq * p > 0 for p in (scale.lo, scale.hi)):
            # rising over the whole range (its slope is linear in p); knots where they follow
            # the points better (not where seeds scatter around one smooth curve)
            through = model.model_copy(update={"knots": knots})
            return through if len(knots) >= 2 and _miss(through, rows) < _miss(model, rows) else model
    raise ValueError(f"{task.name}: the measured length does not grow with {scale.primary}")


def _miss(model: LengthModel, rows: list[tuple[int, float]]) -> float:
    """The mean relative miss of the model's curve over the points."""
    return sum(abs(model.curve(p) - size) / max(size, 1.0) for p, size in rows) / len(rows)


def _knots(rows: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The mean length at each primary count, in order, keeping only counts whose length rises
    above every smaller count's (so the curve rises everywhere)."""
    sizes: dict[int, list[float]] = defaultdict(list)
    for primary, size in rows:
        sizes[primary].append(size)
    knots: list[tuple[int, float]] = []
    for primary in sorted(sizes):
        mean = round(sum(sizes[primary]) / len(sizes[primary]), 1)
        if not knots or mean > knots[-1][1]:
            knots.append((primary, mean))
    return knots


def fit_features(points: Iterable[tuple[tuple[float, ...], int]]) -> list[float]:
    """[c0, c1, ...] of length ≈ c0 + Σ ci·feature_i, least squares on relative error over
    measured (length features, length) points."""
    rows = list(points)
    if len(rows) <= len(rows[0][0]) + 1:
        raise ValueError("too few calibration points to fit the length features")
    return _least_squares([[1.0, *f] for f, _ in rows], [float(m) for _, m in rows])


def _weighted_fit(rows: list[tuple[int, float]], degree: int) -> list[float]:
    return _least_squares([[float(p) ** k for k in range(degree + 1)] for p, _ in rows], [size for _, size in rows])


def _least_squares(x_rows: list[list[float]], sizes: list[float]) -> list[float]:
    """Coefficients minimising the relative error of x·c against `sizes`."""
    x, y = np.array(x_rows), np.array(sizes)
    weights = 1.0 / np.maximum(y, 1.0)
    coef, *_ = np.linalg.lstsq(x * weights[:, None], y * weights, rcond=None)
    return [round(float(c), 6) for c in coef]
