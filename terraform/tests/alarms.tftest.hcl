# The alarms module, planned against a mocked provider: alarms that fire on what goes wrong, an
# optional topic, and the ECS events behind the task-failure alarm.

mock_provider "aws" {
  override_during = plan

  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
  }
  mock_resource "aws_sns_topic" {
    defaults = { arn = "arn:aws:sns:us-east-1:123456789012:pf-alarms" }
  }
  mock_resource "aws_cloudwatch_log_group" {
    defaults = { arn = "arn:aws:logs:us-east-1:123456789012:log-group:/aws/events/pf/ecs" }
  }
}

variables {
  name                    = "pf"
  dead_letter_queue_names = { ingest = "pf-ingest-dlq", chunks = "pf-chunks-dlq", completion = "pf-completion-dlq" }
  chunks_queue_name       = "pf-chunks"
  handler_queue_names     = { ingest = "pf-ingest", completion = "pf-completion" }
  function_names          = { splitter = "pf-splitter", completion = "pf-completion", dead_letter = "pf-dead-letter" }
  create_ecs_alarms       = true
  cluster_arn             = "arn:aws:ecs:us-east-1:123456789012:cluster/pf"
  alarm_actions           = ["arn:aws:sns:us-east-1:123456789012:existing"]
  create_topic            = true
  topic_kms_key_arn       = "arn:aws:kms:us-east-1:123456789012:key/test"
  email_addresses         = ["ops@example.com"]
}

run "alarms" {
  command = plan

  module {
    source = "./modules/alarms"
  }

  # The issue: a DLQ alarm on messages visible alone rarely fired, because the dead-letter
  # Lambda empties the chunks DLQ within seconds and a redrive is not a SendMessage.
  assert {
    condition = alltrue([for role, a in aws_cloudwatch_metric_alarm.dead_letter :
      a.metric_name == null &&
      toset([for q in a.metric_query : q.metric[0].metric_name if length(q.metric) > 0]) == toset(["NumberOfMessagesReceived", "ApproximateNumberOfMessagesVisible", "NumberOfMessagesSent"]) &&
      alltrue([for q in a.metric_query : q.metric[0].dimensions.QueueName == var.dead_letter_queue_names[role] if length(q.metric) > 0]) &&
      one([for q in a.metric_query : q.expression if q.return_data == true]) == "FILL(received, 0) + FILL(visible, 0) + FILL(sent, 0)" &&
      a.threshold == 0 && a.comparison_operator == "GreaterThanThreshold"
    ]) && length(aws_cloudwatch_metric_alarm.dead_letter) == 3
    error_message = "each DLQ alarms on messages arriving: received by its consumer, waiting visible, or sent"
  }

  assert {
    condition = (
      { for k, a in aws_cloudwatch_metric_alarm.lambda_errors : k => [a.namespace, a.metric_name, a.dimensions.FunctionName, a.threshold] } == {
        splitter    = ["AWS/Lambda", "Errors", "pf-splitter", 0]
        completion  = ["AWS/Lambda", "Errors", "pf-completion", 0]
        dead_letter = ["AWS/Lambda", "Errors", "pf-dead-letter", 0]
      } &&
      { for k, a in aws_cloudwatch_metric_alarm.lambda_throttles : k => [a.metric_name, a.dimensions.FunctionName] } == {
        splitter    = ["Throttles", "pf-splitter"]
        completion  = ["Throttles", "pf-completion"]
        dead_letter = ["Throttles", "pf-dead-letter"]
      }
    )
    error_message = "every function has an errors alarm and a throttles alarm"
  }

  assert {
    condition = (
      jsondecode(aws_cloudwatch_event_rule.ecs["task-failed-to-start"].event_pattern) == {
        source        = ["aws.ecs"]
        "detail-type" = ["ECS Task State Change"]
        detail        = { clusterArn = [var.cluster_arn], lastStatus = ["STOPPED"], stopCode = ["TaskFailedToStart"] }
      } &&
      jsondecode(aws_cloudwatch_event_rule.ecs["service-start-impaired"].event_pattern).detail.eventName == ["SERVICE_TASK_START_IMPAIRED", "SERVICE_TASK_PLACEMENT_FAILURE"] &&
      alltrue([for t in aws_cloudwatch_event_target.ecs : t.arn == aws_cloudwatch_log_group.ecs_events[0].arn])
    )
    error_message = "runner tasks that stop before running, and a service that cannot start or place tasks, are kept in a log group"
  }

  assert {
    condition = (
      toset([for q in aws_cloudwatch_metric_alarm.task_start_failures[0].metric_query : q.metric[0].dimensions.RuleName if length(q.metric) > 0]) == toset(["pf-task-failed-to-start", "pf-service-start-impaired"]) &&
      alltrue([for q in aws_cloudwatch_metric_alarm.task_start_failures[0].metric_query : q.metric[0].metric_name == "Invocations" && q.metric[0].namespace == "AWS/Events" if length(q.metric) > 0])
    )
    error_message = "the task-failure alarm counts both rules' events"
  }

  assert {
    condition     = aws_cloudwatch_metric_alarm.oldest_message["chunks"].alarm_name == "pf-oldest-chunk-age" && aws_cloudwatch_metric_alarm.oldest_message["chunks"].dimensions.QueueName == "pf-chunks" && aws_cloudwatch_metric_alarm.oldest_message["chunks"].threshold == 1800
    error_message = "the age of the oldest chunk message is watched"
  }

  assert {
    condition = { for role, a in aws_cloudwatch_metric_alarm.oldest_message : role => [a.metric_name, a.dimensions.QueueName, a.threshold] if role != "chunks" } == {
      ingest     = ["ApproximateAgeOfOldestMessage", "pf-ingest", 900]
      completion = ["ApproximateAgeOfOldestMessage", "pf-completion", 900]
    }
    error_message = "the ingest and completion queues' oldest messages are watched too: nothing waits there unseen until SQS drops it"
  }

  assert {
    condition = alltrue([for a in concat(
      values(aws_cloudwatch_metric_alarm.dead_letter), values(aws_cloudwatch_metric_alarm.lambda_errors),
      values(aws_cloudwatch_metric_alarm.lambda_throttles), values(aws_cloudwatch_metric_alarm.oldest_message), aws_cloudwatch_metric_alarm.task_start_failures) :
      a.alarm_actions == toset(["arn:aws:sns:us-east-1:123456789012:existing", "arn:aws:sns:us-east-1:123456789012:pf-alarms"]) && a.ok_actions == a.alarm_actions
    ])
    error_message = "every alarm notifies the given actions and the topic, on alarm and on recovery"
  }

  assert {
    condition = (
      aws_sns_topic.this[0].name == "pf-alarms" && aws_sns_topic.this[0].kms_master_key_id == var.topic_kms_key_arn &&
      [for s in aws_sns_topic_subscription.email : [s.protocol, s.endpoint]] == [["email", "ops@example.com"]]
    )
    error_message = "the topic is encrypted with the deployment's key and mails the given addresses"
  }
}

run "no_runners_no_topic" {
  command = plan

  module {
    source = "./modules/alarms"
  }

  variables {
    create_ecs_alarms = false
    cluster_arn       = null
    create_topic      = false
    alarm_actions     = []
  }

  assert {
    condition = (
      length(aws_cloudwatch_event_rule.ecs) == 0 && length(aws_cloudwatch_metric_alarm.task_start_failures) == 0 &&
      length(aws_sns_topic.this) == 0 && length(aws_sns_topic_subscription.email) == 0 &&
      length(aws_cloudwatch_metric_alarm.dead_letter) == 3 && length(aws_cloudwatch_metric_alarm.lambda_errors) == 3 &&
      length(aws_cloudwatch_metric_alarm.oldest_message["chunks"].alarm_actions) == 0
    )
    error_message = "without runners no ECS rule; without a topic no subscription; the queue and function alarms stay"
  }
}

run "create_false_creates_nothing" {
  command = plan

  module {
    source = "./modules/alarms"
  }

  variables {
    create = false
  }

  assert {
    condition = (
      length(aws_cloudwatch_metric_alarm.dead_letter) + length(aws_cloudwatch_metric_alarm.lambda_errors) +
      length(aws_cloudwatch_metric_alarm.oldest_message) + length(aws_cloudwatch_event_rule.ecs) + length(aws_sns_topic.this) == 0
    )
    error_message = "create = false plans no alarm"
  }
}
