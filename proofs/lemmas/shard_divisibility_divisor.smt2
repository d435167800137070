; Lemma SHARD-DIVISOR: divisibility passes to divisors and combines to the lcm:
;   8 | S  implies  4 | S and 2 | S;   8 | S and 3 | S  imply  24 | S.
; Witnesses are explicit quotients; the negation is asserted; expected: unsat.
(declare-const S Int)
(declare-const a Int)
(declare-const b Int)
(declare-const q Int)
(declare-const r Int)
(assert (= S (* 8 a)))
(assert (or (and (= S (+ (* 4 q) r)) (>= r 1) (<= r 3))
            (and (= S (+ (* 2 q) r)) (= r 1))
            (and (= S (* 3 b)) (= S (+ (* 24 q) r)) (>= r 1) (<= r 23))))
(check-sat)
