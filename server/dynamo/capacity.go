package dynamo

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Meter sums the write (and read) units a Store's requests consume, per operation
// (Options.Meter). It is for tests and benches against a DynamoDB-compatible
// server: it reads every item a write touches before and after the write, so
// it doubles the requests and must not run in production.
//
// Two figures are kept. Reported is what the server answers for
// ReturnConsumedCapacity (INDEXES is asked for). moto (the test server)
// answers fixed numbers, whatever the item's size: PutItem 1, UpdateItem 0.5,
// DeleteItem 1, BatchWriteItem 1 for the whole batch, TransactWriteItems
// nothing, and nothing for a write whose condition failed; so Reported is a
// cross-check only. Units is computed here by AWS's published rules, from the
// item images read before and after each write:
//
//   - a standard write (PutItem, UpdateItem, DeleteItem, each request of a
//     BatchWriteItem) costs 1 WCU per started KB of the larger of the item's
//     before and after images (the before image alone for a delete), at least 1;
//   - a transactional one costs 2 per started KB, each item of the
//     transaction, a ConditionCheck included;
//   - a write whose condition fails still costs its units (a cancelled
//     transaction is counted as if it committed: every item is prepared);
//   - each global secondary index entry written costs 1 WCU per started KB of
//     the index entry, also in a transaction: an update that changes an index
//     key costs a delete and a put (2), one that adds or removes the key 1, one
//     leaving it alone 0 (nor any attribute the index projects).
//
// Item sizes follow AWS's rules: attribute name bytes plus value bytes (a
// string its UTF-8 length, a number about one byte per two significant
// digits plus one, a map or list 3 bytes plus its elements and one byte
// each); an index entry is its key attributes, the table's key and 100 bytes.
type Meter struct {
	mu  sync.Mutex
	ops map[string]*OpUnits
}

// OpUnits is what one operation type consumed: Units by the rules above,
// Reported as the server said, Calls the requests counted.
type OpUnits struct {
	Calls    int
	Units    float64 // WCU by AWS's rules, index writes included
	Index    float64 // of Units, the GSI writes
	Reported float64 // the server's ConsumedCapacity, summed (writes)
	Read     float64 // RCU by AWS's rules (GetItem, BatchGetItem, Query)
}

// NewMeter returns an empty Meter.
func NewMeter() *Meter { return &Meter{ops: map[string]*OpUnits{}} }

// Reset zeroes the sums, so a test measures one step at a time.
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops = map[string]*OpUnits{}
}

// Ops returns a copy of the sums, by operation name ("TransactWriteItems").
func (m *Meter) Ops() map[string]OpUnits {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]OpUnits, len(m.ops))
	for k, v := range m.ops {
		out[k] = *v
	}
	return out
}

// ReadUnits is the total read units by the rules, every operation.
func (m *Meter) ReadUnits() float64 {
	var n float64
	for _, o := range m.Ops() {
		n += o.Read
	}
	return n
}

// Units is the total write units by the rules, every operation.
func (m *Meter) Units() float64 {
	var n float64
	for _, o := range m.Ops() {
		n += o.Units
	}
	return n
}

// String lists the sums, one operation after another.
func (m *Meter) String() string {
	ops := m.Ops()
	names := make([]string, 0, len(ops))
	for k := range ops {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		o := ops[k]
		if o.Read > 0 || o.Units == 0 {
			fmt.Fprintf(&b, "%s×%d: %g RCU; ", k, o.Calls, o.Read)
			continue
		}
		fmt.Fprintf(&b, "%s×%d: %g WCU (index %g; server reported %g); ", k, o.Calls, o.Units, o.Index, o.Reported)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

func (m *Meter) addRead(op string, rcu float64) {
	m.count(op, OpUnits{Read: rcu})
}

func (m *Meter) add(op string, units, index, reported float64) {
	m.count(op, OpUnits{Units: units, Index: index, Reported: reported})
}

// count adds one call of op and its units.
func (m *Meter) count(op string, u OpUnits) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.ops[op]
	if o == nil {
		o = &OpUnits{}
		m.ops[op] = o
	}
	o.Calls++
	o.Units += u.Units
	o.Index += u.Index
	o.Reported += u.Reported
	o.Read += u.Read
}

// meterSkipKey marks the meter's own reads, which are not counted.
type meterSkipKey struct{}

// touched is one item a write touches, with how it is billed.
type touched struct {
	table string
	key   item
	put   item // a Put's new item, else nil (the after image is read)
	del   bool
	tx    bool
}

// metering is the SDK API option that counts the store's writes; it runs
// inside serialWrites' lock when both are on, so no write of this store
// comes between its reads and the write.
func (s *Store) metering(st *middleware.Stack) error {
	return st.Initialize.Add(middleware.InitializeMiddlewareFunc("chatMeter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if ctx.Value(meterSkipKey{}) != nil {
				return next.HandleInitialize(ctx, in)
			}
			op := awsmiddleware.GetOperationName(ctx)
			items := s.touches(in.Parameters)
			if items == nil {
				out, md, err := next.HandleInitialize(ctx, in)
				if err == nil {
					if rcu, ok := readUnits(in.Parameters, out.Result); ok {
						s.o.Meter.addRead(op, rcu)
					}
				}
				return out, md, err
			}
			rctx := context.WithValue(context.WithoutCancel(ctx), meterSkipKey{}, true)
			before := make([]item, len(items))
			for i, t := range items {
				before[i] = s.meterRead(rctx, t.table, t.key)
			}
			out, md, err := next.HandleInitialize(ctx, in)
			var units, index float64
			for i, t := range items {
				after := t.put
				switch {
				case err != nil: // nothing written: billed for what was there, or what was sent
					after = before[i]
					if after == nil {
						after = t.put
					}
				case t.del:
					after = nil
				case after == nil:
					after = s.meterRead(rctx, t.table, t.key)
				}
				kb := math.Ceil(float64(max(itemSize(before[i]), itemSize(after))) / 1024)
				kb = max(kb, 1)
				if t.tx {
					kb *= 2
				}
				units += kb
				if err == nil {
					gsi := s.indexWrites(t.table, before[i], after)
					index += gsi
					units += gsi
				}
			}
			s.o.Meter.add(op, units, index, reportedUnits(out.Result))
			return out, md, err
		}), middleware.After)
}

// touches lists the items a write request touches; nil for a read.
func (s *Store) touches(params any) []touched {
	keyOf := func(table string, it item) item {
		for _, d := range s.tableDefs() {
			if d.name == table {
				k := item{d.pk: it[d.pk]}
				if d.sk != "" {
					k[d.sk] = it[d.sk]
				}
				return k
			}
		}
		return it
	}
	switch p := params.(type) {
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
		t := aws.ToString(p.TableName)
		return []touched{{table: t, key: keyOf(t, p.Item), put: p.Item}}
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
		return []touched{{table: aws.ToString(p.TableName), key: p.Key}}
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
		return []touched{{table: aws.ToString(p.TableName), key: p.Key, del: true}}
	case *dynamodb.BatchWriteItemInput:
		p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
		var out []touched
		for t, reqs := range p.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					out = append(out, touched{table: t, key: keyOf(t, r.PutRequest.Item), put: r.PutRequest.Item})
				case r.DeleteRequest != nil:
					out = append(out, touched{table: t, key: r.DeleteRequest.Key, del: true})
				}
			}
		}
		return out
	case *dynamodb.TransactWriteItemsInput:
		p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
		out := []touched{}
		for _, it := range p.TransactItems {
			switch {
			case it.Put != nil:
				t := aws.ToString(it.Put.TableName)
				out = append(out, touched{table: t, key: keyOf(t, it.Put.Item), put: it.Put.Item, tx: true})
			case it.Update != nil:
				out = append(out, touched{table: aws.ToString(it.Update.TableName), key: it.Update.Key, tx: true})
			case it.Delete != nil:
				out = append(out, touched{table: aws.ToString(it.Delete.TableName), key: it.Delete.Key, del: true, tx: true})
			case it.ConditionCheck != nil:
				out = append(out, touched{table: aws.ToString(it.ConditionCheck.TableName), key: it.ConditionCheck.Key, tx: true})
			}
		}
		return out
	}
	return nil
}

func (s *Store) meterRead(ctx context.Context, table string, key item) item {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil
	}
	return out.Item
}

// indexWrites is the GSI units a write from before to after costs: the
// participants table's by_user_activity (keys only) and the conversations
// table's archive_due (its keys and archived_through).
func (s *Store) indexWrites(table string, before, after item) float64 {
	var entry func(it item) (item, bool)
	switch table {
	case s.t.participants:
		entry = func(it item) (item, bool) {
			if it == nil || it["activity"] == nil || it["user_id"] == nil {
				return nil, false
			}
			return item{"user_id": it["user_id"], "activity": it["activity"], "conversation_id": it["conversation_id"]}, true
		}
	case s.t.conversations:
		entry = func(it item) (item, bool) {
			if it == nil || it["archive_shard"] == nil || it["archive_at"] == nil {
				return nil, false
			}
			e := item{"archive_shard": it["archive_shard"], "archive_at": it["archive_at"], "conversation_id": it["conversation_id"]}
			if w := it["archived_through"]; w != nil {
				e["archived_through"] = w
			}
			return e, true
		}
	case s.t.tokens:
		entry = func(it item) (item, bool) {
			if it == nil || it["user_id"] == nil {
				return nil, false
			}
			return item{"user_id": it["user_id"], "hash": it["hash"]}, true
		}
	default:
		return 0
	}
	kb := func(e item) float64 { return math.Ceil(float64(itemSize(e)+100) / 1024) }
	b, hadB := entry(before)
	a, hasA := entry(after)
	switch {
	case hadB && hasA && reflect.DeepEqual(b, a):
		return 0
	case hadB && hasA:
		return kb(b) + kb(a)
	case hadB:
		return kb(b)
	case hasA:
		return kb(a)
	}
	return 0
}

func reportedUnits(result any) float64 {
	sum := func(cs ...*types.ConsumedCapacity) float64 {
		var n float64
		for _, c := range cs {
			if c != nil {
				n += aws.ToFloat64(c.CapacityUnits)
			}
		}
		return n
	}
	switch o := result.(type) {
	case *dynamodb.PutItemOutput:
		return sum(o.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return sum(o.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return sum(o.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		var n float64
		for i := range o.ConsumedCapacity {
			n += sum(&o.ConsumedCapacity[i])
		}
		return n
	case *dynamodb.TransactWriteItemsOutput:
		var n float64
		for i := range o.ConsumedCapacity {
			n += sum(&o.ConsumedCapacity[i])
		}
		return n
	}
	return 0
}

// readUnits is what a read cost by AWS's rules: per item, 1 RCU per started
// 4 KB read strongly consistently, half that eventually consistently (a key
// with no item costs as a small one); a Query's items are summed before
// rounding. A Query's items dropped by a filter are not seen here, so not
// counted. ok is false for anything but a read.
func readUnits(params, result any) (float64, bool) {
	per := func(consistent *bool) float64 {
		if aws.ToBool(consistent) {
			return 1
		}
		return 0.5
	}
	units := func(size int) float64 { return max(math.Ceil(float64(size)/4096), 1) }
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		o, _ := result.(*dynamodb.GetItemOutput)
		if o == nil {
			return 0, false
		}
		return units(itemSize(o.Item)) * per(p.ConsistentRead), true
	case *dynamodb.BatchGetItemInput:
		o, _ := result.(*dynamodb.BatchGetItemOutput)
		if o == nil {
			return 0, false
		}
		var n float64
		for table, ka := range p.RequestItems {
			got := o.Responses[table]
			for _, it := range got {
				n += units(itemSize(it)) * per(ka.ConsistentRead)
			}
			missing := len(ka.Keys) - len(got) - len(o.UnprocessedKeys[table].Keys)
			n += float64(max(missing, 0)) * per(ka.ConsistentRead)
		}
		return n, true
	case *dynamodb.QueryInput:
		o, _ := result.(*dynamodb.QueryOutput)
		if o == nil {
			return 0, false
		}
		size := 0
		for _, it := range o.Items {
			size += itemSize(it)
		}
		return units(size) * per(p.ConsistentRead), true
	case *dynamodb.ScanInput:
		// Billed for what it read; with a filter that is more than it
		// returns, which is all this sees: count a filtered scan's cost by
		// scanning without the filter.
		o, _ := result.(*dynamodb.ScanOutput)
		if o == nil {
			return 0, false
		}
		size := 0
		for _, it := range o.Items {
			size += itemSize(it)
		}
		return units(size) * per(p.ConsistentRead), true
	}
	return 0, false
}

// itemSize is an item's size by DynamoDB's rules (see Meter).
func itemSize(it item) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

// sumSizes adds up the sizes of a set's members.
func sumSizes[T any](set []T, size func(T) int) int {
	n := 0
	for _, e := range set {
		n += size(e)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		return sumSizes(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sumSizes(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sumSizes(v.Value, func(b []byte) int { return len(b) })
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += len(k) + valueSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += valueSize(e) + 1
		}
		return n
	}
	return 0
}

// numberSize is about one byte per two significant digits, plus one.
func numberSize(s string) int {
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0")
	if i := strings.IndexByte(s, '.'); i < 0 {
		s = strings.TrimRight(s, "0")
	} else {
		s = strings.TrimRight(s[:i]+s[i+1:], "0")
	}
	return (len(s)+1)/2 + 1
}
