# pagefleet in a VPC made for it: public subnets with the internet gateway and one NAT gateway,
# private subnets for the GPU runners that reach the internet through it (the vLLM sidecar
# downloads its model from Hugging Face), and an S3 gateway endpoint so image layers and chunks
# do not pay the NAT gateway's per-GB charge.

################################################################################
# VPC
################################################################################

resource "aws_vpc" "this" {
  # checkov:skip=CKV2_AWS_11:An example VPC: flow logs (a log group and a role of their own) are the operator's choice, as in terraform-aws-modules/vpc, where they are off by default.
  cidr_block           = var.vpc_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true

  tags = { Name = var.name }
}

# No rules: nothing may use the default security group (the runners have their own).
resource "aws_default_security_group" "this" {
  vpc_id = aws_vpc.this.id
}

resource "aws_internet_gateway" "this" {
  vpc_id = aws_vpc.this.id

  tags = { Name = var.name }
}

resource "aws_subnet" "public" {
  count = length(var.azs)

  vpc_id            = aws_vpc.this.id
  cidr_block        = cidrsubnet(var.vpc_cidr, 8, count.index)
  availability_zone = var.azs[count.index]

  tags = { Name = "${var.name}-public-${var.azs[count.index]}" }
}

# /20 each: the runners need few addresses, the room is for what else the VPC will hold.
resource "aws_subnet" "private" {
  count = length(var.azs)

  vpc_id            = aws_vpc.this.id
  cidr_block        = cidrsubnet(var.vpc_cidr, 4, count.index + 1)
  availability_zone = var.azs[count.index]

  tags = { Name = "${var.name}-private-${var.azs[count.index]}" }
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.this.id

  tags = { Name = "${var.name}-public" }
}

resource "aws_route" "public_internet" {
  route_table_id         = aws_route_table.public.id
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = aws_internet_gateway.this.id
}

resource "aws_route_table_association" "public" {
  count = length(var.azs)

  subnet_id      = aws_subnet.public[count.index].id
  route_table_id = aws_route_table.public.id
}

# One NAT gateway, not one per zone: the runners' traffic through it is the model download on
# an instance's first task, and a zone's outage costs only new downloads there.
resource "aws_eip" "nat" {
  domain = "vpc"

  tags = { Name = "${var.name}-nat" }
}

resource "aws_nat_gateway" "this" {
  allocation_id = aws_eip.nat.id
  subnet_id     = aws_subnet.public[0].id

  tags = { Name = var.name }

  depends_on = [aws_internet_gateway.this]
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.this.id

  tags = { Name = "${var.name}-private" }
}

resource "aws_route" "private_nat" {
  route_table_id         = aws_route_table.private.id
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.this.id
}

resource "aws_route_table_association" "private" {
  count = length(var.azs)

  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private.id
}

# Free, and S3 traffic (ECR's image layers, chunk PDFs, results) bypasses the NAT gateway.
resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.this.id
  service_name      = "com.amazonaws.${var.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [aws_route_table.private.id]

  tags = { Name = "${var.name}-s3" }
}

################################################################################
# pagefleet
################################################################################

module "pagefleet" {
  source = "../../"

  name                = var.name
  region              = var.region
  vpc_id              = aws_vpc.this.id
  subnet_ids          = aws_subnet.private[*].id
  runner_kind         = var.runner_kind
  runner_image_tag    = var.runner_image_tag
  lambda_package_path = var.lambda_package_path
}
