; Lemma ALIGN-REC-2: two steps of the recurrence with alignment 4096 starting at an aligned
; offset o_0: every offset is aligned, the intervals [o_i, o_i + s_i) do not overlap and the
; end offset is at most o_0 + s_0 + s_1 + 2*(a - 1).  Quotients q1, q2 state the ceilings.
; The negation is asserted; expected: unsat.
(declare-const o0 Int)
(declare-const k0 Int)
(declare-const s0 Int)
(declare-const s1 Int)
(declare-const q1 Int)
(declare-const q2 Int)
(declare-const o1 Int)
(declare-const o2 Int)
(assert (= o0 (* 4096 k0)))
(assert (>= o0 0))
(assert (>= s0 0))
(assert (>= s1 0))
(assert (and (< (- (* 4096 q1) 4096) (+ o0 s0)) (<= (+ o0 s0) (* 4096 q1)) (= o1 (* 4096 q1))))
(assert (and (< (- (* 4096 q2) 4096) (+ o1 s1)) (<= (+ o1 s1) (* 4096 q2)) (= o2 (* 4096 q2))))
(assert (or (not (= (mod o1 4096) 0))
            (not (= (mod o2 4096) 0))
            (< o1 (+ o0 s0))
            (< o2 (+ o1 s1))
            (> o2 (+ o0 s0 s1 (* 2 4095)))))
(check-sat)
