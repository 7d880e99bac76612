package cluster

import (
	"context"
	"strconv"
	"testing"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// Slot agrees with the cluster's own CLUSTER KEYSLOT, and TagFor's keys
// land on the shard it was asked for.
func TestSlotAgreesWithTheServer(t *testing.T) {
	c := servertest.StartCluster(t, 1, 0)
	cl := c.Client(c.Nodes()[0])
	keys := []string{"", "a", "foo", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "{bar", "vkwatch:{12}:7", "ü"}
	for i := range 200 {
		keys = append(keys, "key:"+strconv.Itoa(i*7919))
	}
	for _, k := range keys {
		want, err := cl.ClusterKeySlot(context.Background(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := Slot(k); int64(got) != want {
			t.Errorf("Slot(%q) = %d, CLUSTER KEYSLOT says %d", k, got, want)
		}
	}
	for _, r := range []source.SlotRange{{Start: 0, End: 5460}, {Start: 5461, End: 10922}, {Start: 16383, End: 16383}} {
		tag := TagFor([]source.SlotRange{r})
		if s := Slot("vkwatch:{" + tag + "}:42"); tag == "" || s < r.Start || s > r.End {
			t.Errorf("TagFor(%v) = %q, slot %d", r, tag, s)
		}
	}
}
