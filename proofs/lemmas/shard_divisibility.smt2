; Lemma SHARD-DIV (sequence parallelism): if S = 8*k (the declared fact S % 8 == 0) and
; t = 8, then S is divisible by t: there is no quotient/remainder pair S = 8*q + r with
; 1 <= r <= 7. Each of the t pieces has S/t = k tokens and the pieces add up to S.
; The negation is asserted; expected: unsat.
(declare-const S Int)
(declare-const k Int)
(declare-const q Int)
(declare-const r Int)
(assert (>= S 1))
(assert (= S (* 8 k)))
(assert (or (and (= S (+ (* 8 q) r)) (>= r 1) (<= r 7))
            (not (= (* 8 k) S))
            (< k 1)))
(check-sat)
