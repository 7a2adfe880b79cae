package alerts

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamcheck/streamcheck/internal/report"
)

// TestKafkaSink produces through kafka-go to an in-process Kafka-protocol
// broker (kfake) and consumes with a different client (franz-go's kgo):
// one record per delivery, key = alert id, value = the alert JSON, and a
// redelivery of an id lands in the same partition as the first.
func TestKafkaSink(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "alerts"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sink, err := NewKafka(KafkaOptions{Brokers: c.ListenAddrs(), Topic: "alerts"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if sink.Name() != "kafka:alerts" {
		t.Errorf("name %q", sink.Name())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sent := map[string]report.Alert{}
	for _, id := range []string{"k1", "k2", "k3", "k4", "k1"} {
		a := lostUpdateAlert(t, id)
		sent[id] = a
		if err := sink.Deliver(ctx, a); err != nil {
			t.Fatalf("deliver %s: %v", id, err)
		}
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("alerts"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	partitions := map[string]map[int32]bool{}
	n := 0
	for n < 5 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 5 records: %v", n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			n++
			id := string(r.Key)
			var got report.Alert
			if err := json.Unmarshal(r.Value, &got); err != nil {
				t.Fatalf("record %s: %v", id, err)
			}
			if !reflect.DeepEqual(got, sent[id]) {
				t.Errorf("record with key %q carries alert %q", id, got.ID)
			}
			if partitions[id] == nil {
				partitions[id] = map[int32]bool{}
			}
			partitions[id][r.Partition] = true
		})
	}
	if len(partitions) != 4 || len(partitions["k1"]) != 1 {
		t.Errorf("keys and partitions: %v", partitions)
	}
}
