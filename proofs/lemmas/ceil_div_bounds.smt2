; Lemma CEIL-DIV: for x >= 0 and the divisor 8, q = ceil(x / 8) is stated by
;   8*q - 8 < x <= 8*q.
; Claim: x <= 8*q <= x + 7, q >= 0, q <= x when x >= 1, and q = 0 exactly when x = 0;
; the floor f (8*f <= x < 8*f + 8) satisfies f <= q <= f + 1.
; The negation is asserted; expected: unsat.
(declare-const x Int)
(declare-const q Int)
(declare-const f Int)
(assert (>= x 0))
(assert (and (< (- (* 8 q) 8) x) (<= x (* 8 q))))
(assert (and (<= (* 8 f) x) (< x (+ (* 8 f) 8))))
(assert (or (> (* 8 q) (+ x 7))
            (< q 0)
            (and (>= x 1) (> q x))
            (not (= (= q 0) (= x 0)))
            (< q f)
            (> q (+ f 1))))
(check-sat)
