package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var archiveIndexAttrs = []types.AttributeDefinition{
	{AttributeName: aws.String("archive_shard"), AttributeType: types.ScalarAttributeTypeS},
	{AttributeName: aws.String("archive_at"), AttributeType: types.ScalarAttributeTypeN},
}

// archiveIndexDef is archiveIndex (archive.go). It projects the watermark
// too, so the archiver reads no conversation item; the index is written
// when archive_at changes, and the archiver changes the two together.
func archiveIndexDef() types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(archiveIndex),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("archive_shard"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("archive_at"), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"archived_through"}},
	}
}

// ensureArchiveIndex adds archiveIndex to a conversations table made before
// it (--create-tables on an existing deployment) and waits until it is
// active: DynamoDB backfills it from the items that have both keys, which
// until the first archiver pass seeds them (seedArchive) are those sent to
// since the upgrade.
func (s *Store) ensureArchiveIndex(ctx context.Context, table string) error {
	return s.ensureIndex(ctx, table, archiveIndexAttrs, archiveIndexDef())
}
