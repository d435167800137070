; Lemma ALIGN-REC (reference binder recurrence), alignment a = 256:
;   o_i = ceil((o_{i-1} + s_{i-1}) / a) * a, stated linearly with the quotient q:
;   a*q - a < o_{i-1} + s_{i-1} <= a*q,  o_i = a*q.
; Claim: o_i mod a = 0, o_i >= o_{i-1} + s_{i-1}, and o_i < o_{i-1} + s_{i-1} + a (tight).
; The negation is asserted; expected: unsat.
(declare-const o_prev Int)
(declare-const s_prev Int)
(declare-const q Int)
(declare-const o Int)
(assert (>= o_prev 0))
(assert (>= s_prev 0))
(assert (< (- (* 256 q) 256) (+ o_prev s_prev)))
(assert (<= (+ o_prev s_prev) (* 256 q)))
(assert (= o (* 256 q)))
(assert (or (not (= (mod o 256) 0))
            (< o (+ o_prev s_prev))
            (>= o (+ o_prev s_prev 256))))
(check-sat)
