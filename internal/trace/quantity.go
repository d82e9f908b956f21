// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
)

// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource,
// quantity.go), parsed without linking apimachinery: a sign, digits with an
// optional decimal point, and one suffix: a binary SI suffix (Ki, Mi, Gi,
// Ti, Pi, Ei: powers of 1024), a decimal SI suffix (n, u, m, k, M, G, T,
// P, E) or a decimal exponent (e3, E-2). "500m" is 0.5, "2Gi" is 2³¹,
// "1e3" is 1000, "64G" is 64·10⁹.

// maxQuantityLen bounds a quantity's text, far above any real one.
const maxQuantityLen = 64

// quantityScale returns the quantity's value as an exact rational.
func quantityScale(s string) (*big.Rat, error) {
	if s == "" {
		return nil, errors.New("empty quantity")
	}
	if len(s) > maxQuantityLen {
		return nil, fmt.Errorf("quantity of %d characters (at most %d)", len(s), maxQuantityLen)
	}
	num := s
	neg := false
	switch num[0] {
	case '-':
		neg = true
		num = num[1:]
	case '+':
		num = num[1:]
	}
	i := 0
	for i < len(num) && num[i] >= '0' && num[i] <= '9' {
		i++
	}
	intPart := num[:i]
	frac := ""
	if i < len(num) && num[i] == '.' {
		j := i + 1
		for j < len(num) && num[j] >= '0' && num[j] <= '9' {
			j++
		}
		frac = num[i+1 : j]
		i = j
	}
	// No digits at all ("Mi", "m", "." or "+") is 0 to apimachinery where
	// its fast path reads the number, and an error where its slow path
	// does (Pi, Ei, an exponent below -9: ParseQuantity in quantity.go).
	noDigits := intPart == "" && frac == ""
	if noDigits {
		intPart = "0"
	}
	suffix := num[i:]
	n, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return nil, fmt.Errorf("quantity %s: bad number", Quote(s))
	}
	v := new(big.Rat).SetInt(n)
	v.Mul(v, pow10(-len(frac)))
	var mul *big.Rat
	exp10 := 0 // the decimal exponent of the suffix
	if k, ok := binarySuffix[suffix]; ok {
		mul = new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(10*k)))
	} else if e, ok := decimalSuffix[suffix]; ok {
		mul, exp10 = pow10(e), e
	} else if suffix[0] == 'e' || suffix[0] == 'E' {
		e, err := strconv.ParseInt(suffix[1:], 10, 32)
		if err != nil || suffix[1:] == "" || !(suffix[1] == '-' || suffix[1] == '+' || (suffix[1] >= '0' && suffix[1] <= '9')) {
			return nil, fmt.Errorf("quantity %s: bad exponent %s", Quote(s), Quote(suffix))
		}
		// Beyond ±1000 a non-zero value is out of range or rounds up to
		// the smallest unit as it does at -1000; 0 stays 0.
		if e > 1000 && n.Sign() != 0 {
			return nil, fmt.Errorf("quantity %s: exponent above 1000", Quote(s))
		}
		e = max(-1000, min(e, 1000))
		mul, exp10 = pow10(int(e)), int(e)
	} else {
		return nil, fmt.Errorf("quantity %s: unknown suffix %s (Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E, or an exponent e3)", Quote(s), Quote(suffix))
	}
	if noDigits && (suffix == "Pi" || suffix == "Ei" || exp10 < -9) {
		return nil, fmt.Errorf("quantity %s has no digits", Quote(s))
	}
	v.Mul(v, mul)
	if neg {
		v.Neg(v)
	}
	return v, nil
}

var binarySuffix = map[string]int{"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}

var decimalSuffix = map[string]int{"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

func pow10(e int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil)
	if e < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ceilScaled returns ⌈v · unit⌉ for a value at least 0, or an error if it
// is negative or above math.MaxInt64.
func ceilScaled(s string, unit int64) (int64, error) {
	v, err := quantityScale(s)
	if err != nil {
		return 0, err
	}
	if v.Sign() < 0 {
		return 0, fmt.Errorf("negative quantity %s", Quote(s))
	}
	v.Mul(v, new(big.Rat).SetInt64(unit))
	q, r := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("quantity %s out of range", Quote(s))
	}
	return q.Int64(), nil
}

// QuantityMilli returns a quantity in thousandths, rounded up as
// Quantity.MilliValue rounds: "500m" is 500, "2" is 2000, "0.1m" is 1.
// CPU in millicores. A negative quantity is an error.
func QuantityMilli(s string) (int64, error) { return ceilScaled(s, 1000) }

// QuantityValue returns a quantity in units, rounded up as Quantity.Value
// rounds: "2Gi" is 2147483648, "1e3" is 1000, "1500m" is 2. Memory in
// bytes, extended resources in their unit. A negative quantity is an error.
func QuantityValue(s string) (int64, error) { return ceilScaled(s, 1) }

// CeilMiB returns bytes in MiB, rounded up.
func CeilMiB(b int64) int64 { return b/(1<<20) + min(1, b%(1<<20)) }

// FloorMiB returns bytes in MiB, rounded down.
func FloorMiB(b int64) int64 { return b / (1 << 20) }
