; Lemma SHARD-PIECES: a dimension D split into t = 4 equal pieces of size p (D = 4*p) with
; D >= 4 gives pieces of size at least 1 and at most D, whose sum is D; a shard of a
; product dimension B*S with S = 4*k is B*k, stated linearly for each fixed B in 1..3
; (the case split the prove command uses for products).
; The negation is asserted; expected: unsat.
(declare-const D Int)
(declare-const p Int)
(declare-const S Int)
(declare-const k Int)
(declare-const B Int)
(assert (and (= D (* 4 p)) (>= D 4)))
(assert (and (= S (* 4 k)) (>= S 4) (>= B 1) (<= B 3)))
(assert (or (< p 1) (> p D) (not (= (+ p p p p) D))
            (and (= B 1) (not (= (* 1 S) (* 4 (* 1 k)))))
            (and (= B 2) (not (= (* 2 S) (* 4 (* 2 k)))))
            (and (= B 3) (not (= (* 3 S) (* 4 (* 3 k)))))))
(check-sat)
