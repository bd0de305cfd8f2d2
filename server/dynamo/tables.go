package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute and index names, shared by the writes and the queries.
const (
	// byUserIndex is the participants GSI: a user's conversations by recent
	// activity ("Conversations GSI: (participant, last_message_at)").
	byUserIndex = "by_user_activity"
	// ttlAttr holds the unix-seconds expiry DynamoDB's TTL deletes by.
	ttlAttr = "expires_ttl"
	// firstUserKey is the marker item claimed by the first registration; user
	// ids cannot contain '#'.
	firstUserKey = "#first"
	// storeKey is the users-table item holding the store's identity and
	// the schema version that last wrote it (identity.go).
	storeKey = "#store"
	// unsentIndex is the uploads table's sparse GSI of the uploads no message
	// carries yet: (unsent_shard, created_at), only on items with unsent_shard.
	unsentIndex = "unsent"
)

// isMarker says whether a users-table key is one of the marker items rather
// than a user (user ids cannot contain '#').
func isMarker(id string) bool { return strings.HasPrefix(id, "#") }

type tables struct {
	users, tokens, invites, conversations, participants, messages, messageIDs, status, pending, media, uploads string
}

func newTables(prefix string) tables {
	return tables{
		users:         prefix + "users",
		tokens:        prefix + "tokens",
		invites:       prefix + "invites",
		conversations: prefix + "conversations",
		participants:  prefix + "participants",
		messages:      prefix + "messages",
		messageIDs:    prefix + "message_ids",
		status:        prefix + "message_status",
		pending:       prefix + "pending_deliveries",
		media:         prefix + "media_links",
		uploads:       prefix + "media_uploads",
	}
}

type tableDef struct {
	name       string
	pk, sk     string
	skType     types.ScalarAttributeType
	ttl        bool
	extraGSI   bool // participants' by_user_activity
	unsentGSI  bool // media_uploads' unsent
	archiveGSI bool // conversations' archive_due (archive_table.go)
	tokensGSI  bool // tokens' tokens_by_user (token_index.go)
}

func (s *Store) tableDefs() []tableDef {
	t := s.t
	return []tableDef{
		{name: t.users, pk: "user_id"},
		{name: t.tokens, pk: "hash", ttl: true, tokensGSI: true},
		{name: t.invites, pk: "hash", ttl: true},
		{name: t.conversations, pk: "conversation_id", archiveGSI: true},
		{name: t.participants, pk: "conversation_id", sk: "user_id", skType: types.ScalarAttributeTypeS, extraGSI: true},
		{name: t.messages, pk: "conversation_id", sk: "seq_no", skType: types.ScalarAttributeTypeN},
		{name: t.messageIDs, pk: "conversation_id", sk: "message_id", skType: types.ScalarAttributeTypeS, ttl: true},
		{name: t.status, pk: "user_id", sk: "conversation_id", skType: types.ScalarAttributeTypeS},
		{name: t.pending, pk: "receiver_id", sk: "conversation_id", skType: types.ScalarAttributeTypeS},
		{name: t.media, pk: "media_id", sk: "conversation_id", skType: types.ScalarAttributeTypeS},
		{name: t.uploads, pk: "media_id", unsentGSI: true},
	}
}

// TableNames lists the tables of the store (for IAM policies and cleanup).
func (s *Store) TableNames() []string {
	var out []string
	for _, d := range s.tableDefs() {
		out = append(out, d.name)
	}
	return out
}

// CreateTables creates the tables that do not exist yet (on-demand capacity),
// waits until they are active and turns on TTL where used. Safe to call on every
// start and from several nodes at once.
func (s *Store) CreateTables(ctx context.Context) error {
	for _, d := range s.tableDefs() {
		if err := s.createTable(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) createTable(ctx context.Context, d tableDef) error {
	attrs := []types.AttributeDefinition{{AttributeName: aws.String(d.pk), AttributeType: types.ScalarAttributeTypeS}}
	keys := []types.KeySchemaElement{{AttributeName: aws.String(d.pk), KeyType: types.KeyTypeHash}}
	if d.sk != "" {
		attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(d.sk), AttributeType: d.skType})
		keys = append(keys, types.KeySchemaElement{AttributeName: aws.String(d.sk), KeyType: types.KeyTypeRange})
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(d.name),
		AttributeDefinitions: attrs,
		KeySchema:            keys,
		BillingMode:          types.BillingModePayPerRequest,
	}
	if d.extraGSI {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String("activity"), AttributeType: types.ScalarAttributeTypeN})
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
			IndexName: aws.String(byUserIndex),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("activity"), KeyType: types.KeyTypeRange},
			},
			// The inbox reads the conversations and statuses by key afterwards:
			// keys are all the index needs, and keep its writes small.
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}}
	}
	if d.unsentGSI {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String("unsent_shard"), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String("created_at"), AttributeType: types.ScalarAttributeTypeN})
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
			IndexName: aws.String(unsentIndex),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("unsent_shard"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("created_at"), KeyType: types.KeyTypeRange},
			},
			// The sweep needs the owner and size to give the bytes back.
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}}
	}
	if d.archiveGSI {
		in.AttributeDefinitions = append(in.AttributeDefinitions, archiveIndexAttrs...)
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{archiveIndexDef()}
	}
	if d.tokensGSI {
		in.AttributeDefinitions = append(in.AttributeDefinitions, tokensByUserAttrs...)
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{tokensByUserDef()}
	}
	_, err := s.db.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamo: create table %s: %w", d.name, err)
	}
	w := dynamodb.NewTableExistsWaiter(s.db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, 2*time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(d.name)}, 5*time.Minute); err != nil {
		return fmt.Errorf("dynamo: wait for table %s: %w", d.name, err)
	}
	if d.archiveGSI {
		if err := s.ensureArchiveIndex(ctx, d.name); err != nil {
			return err
		}
	}
	if d.tokensGSI {
		if err := s.ensureIndex(ctx, d.name, tokensByUserAttrs, tokensByUserDef()); err != nil {
			return err
		}
	}
	if !d.ttl {
		return nil
	}
	desc, err := s.db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(d.name)})
	if err != nil {
		return fmt.Errorf("dynamo: describe ttl of %s: %w", d.name, err)
	}
	if ttl := desc.TimeToLiveDescription; ttl != nil && (ttl.TimeToLiveStatus == types.TimeToLiveStatusEnabled || ttl.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(d.name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(ttlAttr), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("dynamo: enable ttl on %s: %w", d.name, err)
	}
	return nil
}

// DeleteTables drops every table of the store (tests).
func (s *Store) DeleteTables(ctx context.Context) error {
	var errs []error
	for _, name := range s.TableNames() {
		_, err := s.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var nf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &nf) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
