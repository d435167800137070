; Lemma CAP-MONO: a stage total c1*S + c0 with c1 >= 0 (the total for one fixed B) is at
; most its value at the largest allowed S; so S <= Smax and c1*Smax + c0 <= cap imply
; c1*S + c0 <= cap. Concrete instance: c1 = 3072, c0 = 10^9, Smax = 8192, cap = 2^36.
; The negation is asserted; expected: unsat.
(declare-const S Int)
(assert (and (>= S 8) (<= S 8192)))
(assert (<= (+ (* 3072 8192) 1000000000) 68719476736))
(assert (> (+ (* 3072 S) 1000000000) 68719476736))
(check-sat)
