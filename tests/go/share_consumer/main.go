// Command share_consumer runs franz-go's share consumer (KIP-932) against a broker: three members of one
// share group consume a three-partition topic, acknowledging every record (ACCEPT); it exits 0 once every
// record was delivered and acknowledged exactly once, 1 otherwise. Usage: share_consumer BOOTSTRAP RUN_ID
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	partitions = 3
	records    = 300
	members    = 3
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	bootstrap, run := os.Args[1], os.Args[2]
	topic, group := "franz-jobs-"+run, "franz-workers-"+run
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	admin, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(topic))
	if err != nil {
		fail("client: %v", err)
	}
	defer admin.Close()
	create := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, partitions, 1
	create.Topics = append(create.Topics, t)
	created, err := create.RequestWith(ctx, admin)
	if err != nil || created.Topics[0].ErrorCode != 0 {
		fail("create topic: %v %v", err, created)
	}
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	earliest := "earliest"
	cfg.Name, cfg.Op, cfg.Value = "share.auto.offset.reset", kmsg.IncrementalAlterConfigOpSet, &earliest
	res.Configs = append(res.Configs, cfg)
	alter.Resources = append(alter.Resources, res)
	altered, err := alter.RequestWith(ctx, admin)
	if err != nil || altered.Resources[0].ErrorCode != 0 {
		fail("group config: %v %+v", err, altered)
	}
	for i := 0; i < records; i++ {
		r := &kgo.Record{Value: []byte("job-" + strconv.Itoa(i)), Partition: int32(i % partitions)}
		if err := admin.ProduceSync(ctx, r).FirstErr(); err != nil {
			fail("produce: %v", err)
		}
	}

	var mu sync.Mutex
	deliveries := map[string]int{}
	byMember := map[int]int{}
	done := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for m := 0; m < members; m++ {
		cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ShareGroup(group),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			fail("share client: %v", err)
		}
		wg.Add(1)
		go func(m int, cl *kgo.Client) {
			defer wg.Done()
			defer cl.Close()
			for {
				select {
				case <-done:
					if err := cl.FlushAcks(context.Background()); err != nil {
						fmt.Fprintf(os.Stderr, "flush acks: %v\n", err)
					}
					return
				default:
				}
				pollCtx, pollCancel := context.WithTimeout(ctx, 500*time.Millisecond)
				fetches := cl.PollFetches(pollCtx)
				pollCancel()
				if ctx.Err() != nil {
					return
				}
				fetches.EachError(func(t string, p int32, err error) {
					if err != context.DeadlineExceeded && err != context.Canceled {
						fmt.Fprintf(os.Stderr, "fetch %s/%d: %v\n", t, p, err)
					}
				})
				for _, r := range fetches.Records() {
					r.Ack(kgo.AckAccept)
					mu.Lock()
					deliveries[string(r.Value)]++
					byMember[m]++
					if len(deliveries) == records {
						once.Do(func() { close(done) })
					}
					mu.Unlock()
				}
			}
		}(m, cl)
	}
	wg.Wait()
	if len(deliveries) != records {
		fail("delivered %d distinct records of %d", len(deliveries), records)
	}
	for v, n := range deliveries {
		if n != 1 {
			fail("%s delivered %d times", v, n)
		}
	}
	fmt.Printf("OK %d records, each once; per member %v\n", records, byMember)
}
