; Lemma CEIL-MONO: ceiling division by a positive constant (here 256) is monotone:
;   x <= y  implies  ceil(x / 256) <= ceil(y / 256),
; with the ceilings stated by quotient variables qx, qy.
; The negation is asserted; expected: unsat.
(declare-const x Int)
(declare-const y Int)
(declare-const qx Int)
(declare-const qy Int)
(assert (<= x y))
(assert (and (< (- (* 256 qx) 256) x) (<= x (* 256 qx))))
(assert (and (< (- (* 256 qy) 256) y) (<= y (* 256 qy))))
(assert (> qx qy))
(check-sat)
