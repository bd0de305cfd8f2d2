package dynamo

import (
	"context"
	"errors"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// A write that DynamoDB answered with 200 was applied, even when the body of
// the answer could not be read. The SDK reports that as an error
// ("deserialization failed … use of closed network connection": seen here
// against moto under load, and reported against DynamoDB in aws-sdk-go-v2
// #1825 and #2737) and retries the write. DynamoDB answers a retried
// transaction by its ClientRequestToken, but moto does not, and a retried
// conditional single-item write fails its own condition anywhere: the caller
// would hear "already exists" or "not found" for a write that was made. So,
// for the writes whose answer the store does not read, answeredWrites turns
// such an answer into the empty success it stood for, inside the SDK's retry
// loop, before the retry.

// unreadAnswerKey holds, for the operation under way, the empty output that
// stands for its answer when the store does not read the answer.
type unreadAnswerKey struct{}

// answeredWrites is an SDK API option (see Open).
func answeredWrites(st *middleware.Stack) error {
	err := st.Initialize.Add(middleware.InitializeMiddlewareFunc("chatUnreadAnswer",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if empty := unreadAnswer(in.Parameters); empty != nil {
				ctx = middleware.WithStackValue(ctx, unreadAnswerKey{}, empty)
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	if err != nil {
		return err
	}
	return st.Finalize.Insert(middleware.FinalizeMiddlewareFunc("chatAnsweredWrites",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			if empty := middleware.GetStackValue(ctx, unreadAnswerKey{}); empty != nil && answeredOK(err) {
				return middleware.FinalizeOutput{Result: empty}, md, nil
			}
			return out, md, err
		}), "Retry", middleware.After)
}

// unreadAnswer is the empty output for a write whose answer the store does not
// read (a transaction, or a single-item write returning no values), or nil.
func unreadAnswer(params any) any {
	none := func(rv types.ReturnValue) bool { return rv == "" || rv == types.ReturnValueNone }
	switch p := params.(type) {
	case *dynamodb.TransactWriteItemsInput:
		return &dynamodb.TransactWriteItemsOutput{}
	case *dynamodb.PutItemInput:
		if none(p.ReturnValues) {
			return &dynamodb.PutItemOutput{}
		}
	case *dynamodb.UpdateItemInput:
		if none(p.ReturnValues) {
			return &dynamodb.UpdateItemOutput{}
		}
	case *dynamodb.DeleteItemInput:
		if none(p.ReturnValues) {
			return &dynamodb.DeleteItemOutput{}
		}
	}
	return nil
}

// answeredOK says whether err is a 200 answer that failed afterwards (reading
// or decoding its body): errors DynamoDB itself returns come with 4xx or 5xx.
func answeredOK(err error) bool {
	var re interface{ HTTPStatusCode() int }
	return err != nil && errors.As(err, &re) && re.HTTPStatusCode() == http.StatusOK
}
