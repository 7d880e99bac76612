package cluster

import (
	"strconv"
	"strings"

	"github.com/vkwatch/vkwatch/source"
)

// Slot is the hash slot of key, as the cluster computes it: CRC16 (XMODEM)
// of the key, or of its hash tag (the text between the first '{' and the
// next '}', when not empty), modulo 16384.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % 16384)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), the cluster's.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// TagFor returns a hash tag whose slot lies in slots: keys written as
// "prefix{tag}..." then all land on the shard that owns slots. Empty when
// slots is empty.
func TagFor(slots []source.SlotRange) string {
	if len(slots) == 0 {
		return ""
	}
	// Some tag below 10^6 lands in any non-empty range: the slots of
	// consecutive numbers spread evenly over all 16384.
	for n := 0; n < 1_000_000; n++ {
		tag := strconv.Itoa(n)
		s := Slot("{" + tag + "}")
		for _, r := range slots {
			if s >= r.Start && s <= r.End {
				return tag
			}
		}
	}
	return ""
}
