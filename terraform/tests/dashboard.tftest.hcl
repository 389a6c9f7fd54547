# The dashboard module, planned against a mocked provider: one page of the pipeline's metrics,
# the fleet's only with runners, every alarm given (the scaling ones apart), and a budget and a
# cost anomaly summary that mail someone.

mock_provider "aws" {
  override_during = plan
}

variables {
  name           = "pf"
  region         = "us-east-1"
  queue_names    = { ingest = "pf-ingest", chunks = "pf-chunks", completion = "pf-completion" }
  function_names = { splitter = "pf-splitter", completion = "pf-completion" }
  alarm_arns     = ["arn:aws:cloudwatch:us-east-1:123456789012:alarm:pf-oldest-chunk-age"]
}

run "without_runners" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  assert {
    condition = [for w in jsondecode(output.dashboard_body).widgets : w.properties.title] == [
      "Messages waiting", "Age of the oldest message (s)", "Jobs ended, by status", "Function errors and throttles", "Alarms",
    ]
    error_message = "without runners: the queues, the jobs, the functions and the alarms"
  }

  assert {
    condition     = [for m in jsondecode(output.dashboard_body).widgets[0].properties.metrics : m[3]] == ["pf-ingest", "pf-chunks", "pf-completion"]
    error_message = "each queue's depth, by its name"
  }

  assert {
    condition     = length(jsondecode(output.dashboard_body).widgets[2].properties.metrics) == 6 && jsondecode(output.dashboard_body).widgets[2].properties.metrics[0][1] == "Jobs_done"
    error_message = "jobs by status (done, partial, failed) from both functions that end jobs"
  }

  assert {
    condition     = output.budget_name == null
    error_message = "no budget unless asked for"
  }

  assert {
    condition     = length(aws_ce_anomaly_monitor.this) == 0 && length(aws_ce_anomaly_subscription.this) == 0 && output.cost_anomaly_monitor_arn == null
    error_message = "no anomaly monitor or subscription unless asked for: Cost Explorer is left alone"
  }
}

run "with_runners_a_budget_and_an_anomaly_monitor_brought" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  variables {
    cluster_name           = "pf"
    service_name           = "pf"
    autoscaling_group_name = "pf-runners"
    monthly_budget_usd     = 300
    budget_emails          = ["ops@example.com"]
    scaling_alarm_arns     = ["arn:aws:cloudwatch:us-east-1:123456789012:alarm:pf-chunks-waiting-no-runner", "arn:aws:cloudwatch:us-east-1:123456789012:alarm:pf-chunks-idle"]

    cost_anomaly_threshold_usd = 25
    cost_anomaly_monitor_arn   = "arn:aws:ce::123456789012:anomalymonitor/0a1b2c3d-default"
    cost_anomaly_emails        = ["ops@example.com"]
  }

  assert {
    condition     = length(aws_ce_anomaly_monitor.this) == 0 && aws_ce_anomaly_subscription.this[0].monitor_arn_list == tolist([var.cost_anomaly_monitor_arn]) && output.cost_anomaly_monitor_arn == var.cost_anomaly_monitor_arn
    error_message = "a monitor brought (the account's services monitor, or one a member account cannot make) is subscribed to, and none is created"
  }

  assert {
    condition = (
      jsonencode([for w in jsondecode(output.dashboard_body).widgets : w.properties.alarms if w.type == "alarm"]) == jsonencode([var.alarm_arns, var.scaling_alarm_arns]) &&
      output.alarms_shown == concat(var.alarm_arns, var.scaling_alarm_arns)
    )
    error_message = "every alarm given is on the dashboard: the faults in one widget, the scaling alarms (in ALARM while they act) in another"
  }

  assert {
    condition     = contains([for w in jsondecode(output.dashboard_body).widgets : w.properties.title], "GPU utilisation (%, the runners' average)") && contains([for w in jsondecode(output.dashboard_body).widgets : w.properties.title], "GPU instances")
    error_message = "with runners: tasks, instances and GPU utilisation"
  }

  assert {
    condition = (
      aws_budgets_budget.this[0].limit_amount == "300" &&
      one(aws_budgets_budget.this[0].cost_filter).values == tolist(["user:Deployment$pf"]) &&
      length(aws_budgets_budget.this[0].notification) == 3 &&
      alltrue([for n in aws_budgets_budget.this[0].notification : n.subscriber_email_addresses == toset(["ops@example.com"])])
    )
    error_message = "the budget: the deployment's tagged cost, mailed at 80% and 100% actual and 100% forecast"
  }
}

run "a_budget_and_an_anomaly_summary_that_mail_no_one_refused" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  variables {
    monthly_budget_usd         = 300
    cost_anomaly_threshold_usd = 50
  }

  expect_failures = [var.budget_emails, var.cost_anomaly_emails]
}

run "cost_anomalies_of_the_deployment_s_tag" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  variables {
    cost_anomaly_threshold_usd = 50
    cost_anomaly_emails        = ["ops@example.com", "finance@example.com"]
  }

  override_resource {
    target          = aws_ce_anomaly_monitor.this
    override_during = plan
    values          = { arn = "arn:aws:ce::123456789012:anomalymonitor/made" }
  }

  assert {
    condition = (
      aws_ce_anomaly_monitor.this[0].monitor_type == "CUSTOM" &&
      aws_ce_anomaly_monitor.this[0].monitor_dimension == null &&
      jsondecode(aws_ce_anomaly_monitor.this[0].monitor_specification) == { Tags = { Key = "Deployment", Values = ["pf"], MatchOptions = ["EQUALS"] } }
    )
    error_message = "the monitor made is a custom one over the Deployment tag, never a second AWS-services monitor (one per account)"
  }

  assert {
    condition = (
      aws_ce_anomaly_subscription.this[0].frequency == "DAILY" &&
      aws_ce_anomaly_subscription.this[0].monitor_arn_list == tolist(["arn:aws:ce::123456789012:anomalymonitor/made"]) &&
      aws_ce_anomaly_subscription.this[0].subscriber == toset([{ type = "EMAIL", address = "ops@example.com" }, { type = "EMAIL", address = "finance@example.com" }]) &&
      one(one(aws_ce_anomaly_subscription.this[0].threshold_expression).dimension).key == "ANOMALY_TOTAL_IMPACT_ABSOLUTE" &&
      one(one(aws_ce_anomaly_subscription.this[0].threshold_expression).dimension).values == toset(["50"]) &&
      one(one(aws_ce_anomaly_subscription.this[0].threshold_expression).dimension).match_options == toset(["GREATER_THAN_OR_EQUAL"])
    )
    error_message = "a daily e-mail summary of the anomalies of that monitor whose total impact reaches the threshold"
  }

  assert {
    condition     = output.cost_anomaly_monitor_arn == "arn:aws:ce::123456789012:anomalymonitor/made"
    error_message = "the monitor read is the one made"
  }
}

run "a_threshold_of_no_dollars_and_a_monitor_by_name_refused" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  # Two validations of their own, in one plan (cost_anomaly_emails', which reads the threshold,
  # cannot be judged beside a threshold refused: it has its own runs).
  variables {
    cost_anomaly_threshold_usd = 0
    cost_anomaly_monitor_arn   = "Default-Services-Monitor"
    cost_anomaly_emails        = ["ops@example.com"]
  }

  expect_failures = [var.cost_anomaly_threshold_usd, var.cost_anomaly_monitor_arn]
}

run "cost_anomalies_to_more_than_ten_addresses_refused" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  variables {
    cost_anomaly_threshold_usd = 50
    cost_anomaly_emails        = [for i in range(11) : "ops${i}@example.com"]
  }

  expect_failures = [var.cost_anomaly_emails]
}
